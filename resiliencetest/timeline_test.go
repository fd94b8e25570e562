package resiliencetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
)

func TestTimeline(t *testing.T) {
	fake := clock.NewFake()
	down := errors.New("down")
	f := Timeline(fake,
		Step{At: 10 * time.Second, Fault: Fail(down)},
		Step{At: 20 * time.Second, Fault: RetryAfter(time.Second)},
		Step{At: 30 * time.Second, Fault: Healthy()},
	)
	type probe struct {
		At  time.Duration
		Err string
	}
	var got []probe
	for _, at := range []time.Duration{0, 9 * time.Second, 10 * time.Second, 19 * time.Second, 20 * time.Second, 30 * time.Second, time.Hour} {
		fake.Set(clock.NewFake().Now().Add(at))
		msg := ""
		if err := f.Inject(context.Background()); err != nil {
			msg = err.Error()
		}
		got = append(got, probe{at, msg})
	}
	want := []probe{
		{0, ""}, // before the first step: healthy
		{9 * time.Second, ""},
		{10 * time.Second, "down"},
		{19 * time.Second, "down"},
		{20 * time.Second, "resiliencetest: injected failure, retry after 1s"},
		{30 * time.Second, ""},
		{time.Hour, ""}, // the last step lasts
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("timeline mismatch (-want +got):\n%s", diff)
	}
}

// TestTimelineStartsAtCreation checks that the steps count from the
// Timeline call, not from the clock's epoch or the first call.
func TestTimelineStartsAtCreation(t *testing.T) {
	fake := clock.NewFake()
	fake.Advance(time.Hour)
	f := Timeline(fake, Step{At: time.Minute, Fault: Fail(nil)})
	fake.Advance(59 * time.Second)
	if err := f.Inject(context.Background()); err != nil {
		t.Errorf("59s after creation: %v, want healthy", err)
	}
	fake.Advance(time.Second)
	if err := f.Inject(context.Background()); err != ErrInjected {
		t.Errorf("1m after creation: %v, want ErrInjected", err)
	}
}

// TestTimelineHangs checks a hanging phase on the fake clock: the call
// waits until its context is done.
func TestTimelineHangs(t *testing.T) {
	fake := clock.NewFake()
	f := Timeline(fake, Step{At: 0, Fault: Hang()}, Step{At: time.Minute, Fault: Healthy()})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- f.Inject(ctx) }()
	cancel()
	select {
	case err := <-errc:
		if err != context.Canceled {
			t.Errorf("hanging phase: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the hanging phase did not end with its context")
	}
	fake.Advance(time.Minute)
	if err := f.Inject(context.Background()); err != nil {
		t.Errorf("recovered phase: %v, want nil", err)
	}
}

func TestTimelineInvalid(t *testing.T) {
	wantPanic(t, "resiliencetest: Timeline step 1 At must be >= 0 and >= the previous step's, got 1s", func() {
		Timeline(clock.NewFake(), Step{At: 2 * time.Second}, Step{At: time.Second})
	})
	wantPanic(t, "resiliencetest: Timeline step 0 At must be >= 0", func() {
		Timeline(clock.NewFake(), Step{At: -time.Second})
	})
}

func TestTimelineString(t *testing.T) {
	got := Timeline(clock.NewFake(), Step{}, Step{At: time.Second, Fault: Hang()}).String()
	if want := "timeline(0s healthy, 1s hang)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}
