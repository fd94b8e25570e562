package chaos

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

var errInjected = errors.New("chaos: injected")

func TestFault(t *testing.T) {
	in := NewInjector(1)
	dep := resiliencetest.NewDependency(1, resiliencetest.Healthy())
	p := Fault[int](in, func(context.Context) error { return errInjected })
	if v, err := p.Do(context.Background(), dep.Call); v != 0 || err != errInjected {
		t.Errorf("on: Do = %v, %v; want 0, the injected error", v, err)
	}
	if n := dep.Calls(); n != 0 {
		t.Errorf("on: the dependency got %d calls, want 0", n)
	}
	in.Disable()
	if v, err := p.Do(context.Background(), dep.Call); v != 1 || err != nil {
		t.Errorf("off: Do = %v, %v; want 1, nil", v, err)
	}
	if n := dep.Calls(); n != 1 {
		t.Errorf("off: the dependency got %d calls, want 1", n)
	}
	if got := p.String(); got != "chaos.fault" {
		t.Errorf("name %q, want chaos.fault", got)
	}
}

// TestFaultBehaviour checks that a fault func that returns nil lets the
// call go on: a behaviour injected before the call.
func TestFaultBehaviour(t *testing.T) {
	ran := 0
	p := Fault[int](NewInjector(1), func(context.Context) error { ran++; return nil })
	v, err := p.Do(context.Background(), func(context.Context) (int, error) { return 5, nil })
	if v != 5 || err != nil || ran != 1 {
		t.Errorf("Do = %v, %v, behaviour ran %d times; want 5, nil, 1", v, err, ran)
	}
}

// TestFaultRate checks the share of calls that get the fault.
func TestFaultRate(t *testing.T) {
	random, _ := seeded(9)
	p := Fault[int](NewInjector(0.1, WithRandom(random)), func(context.Context) error { return errInjected })
	const n = 10000
	failed := 0
	for range n {
		if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 0, nil }); err != nil {
			failed++
		}
	}
	if failed < 900 || failed > 1100 {
		t.Errorf("%d of %d calls got the fault, want about 1000", failed, n)
	}
}

// TestFaultUnderRetry puts the fault inside a retry, as the package doc
// says: the retry sees injected failures as the dependency's, and retries
// them.
func TestFaultUnderRetry(t *testing.T) {
	in := NewInjector(1)
	injected := 0
	p := resilience.Then(
		retry.New[int](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0))),
		Fault[int](in, func(context.Context) error {
			injected++
			if injected == 2 {
				in.Disable() // the experiment ends mid-call
			}
			return errInjected
		}),
	)
	v, err := p.Do(context.Background(), func(context.Context) (int, error) { return 7, nil })
	if v != 7 || err != nil || injected != 2 {
		t.Errorf("Do = %v, %v after %d injected faults; want 7, nil after 2", v, err, injected)
	}
}

func TestLatency(t *testing.T) {
	fake := clock.NewFake()
	start := fake.Now()
	p := Latency[int](NewInjector(1), fake, func() time.Duration { return 3 * time.Second })
	var got []time.Duration // when the op ran, since start
	err := resiliencetest.Drive(fake, time.Second, func() {
		_, _ = p.Do(context.Background(), func(context.Context) (int, error) {
			got = append(got, fake.Now().Sub(start))
			return 0, nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{3 * time.Second}, got); diff != "" {
		t.Errorf("the op ran at mismatch (-want +got):\n%s", diff)
	}
	if got := p.String(); got != "chaos.latency" {
		t.Errorf("name %q, want chaos.latency", got)
	}
}

func TestLatencyCancelled(t *testing.T) {
	fake := clock.NewFake()
	p := Latency[int](NewInjector(1), fake, func() time.Duration { return time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	_, err := p.Do(ctx, func(context.Context) (int, error) { ran = true; return 0, nil })
	if err != context.Canceled || ran {
		t.Errorf("Do = %v, op ran %v; want context.Canceled, false", err, ran)
	}
}

func TestLatencyNoDelay(t *testing.T) {
	fake := clock.NewFake()
	for _, d := range []time.Duration{0, -time.Second} {
		p := Latency[int](NewInjector(1), fake, func() time.Duration { return d })
		if v, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); v != 1 || err != nil {
			t.Errorf("delay %v: Do = %v, %v; want 1, nil at once", d, v, err)
		}
	}
	if n := fake.Waiters(); n != 0 {
		t.Errorf("%d timers armed, want none", n)
	}
}

func TestLatencyOff(t *testing.T) {
	fake := clock.NewFake()
	in := NewInjector(1)
	in.Disable()
	called := 0
	p := Latency[int](in, fake, func() time.Duration { called++; return time.Hour })
	if v, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); v != 1 || err != nil || called != 0 {
		t.Errorf("off: Do = %v, %v, delay drawn %d times; want 1, nil, 0", v, err, called)
	}
}

func TestResult(t *testing.T) {
	in := NewInjector(1)
	stale := errors.New("stale")
	p := Result[string](in, func(context.Context) (string, error) { return "made up", stale })
	dep := resiliencetest.NewDependency("real", resiliencetest.Healthy())
	if v, err := p.Do(context.Background(), dep.Call); v != "made up" || err != stale || dep.Calls() != 0 {
		t.Errorf("on: Do = %q, %v, %d calls; want the made-up result, no call", v, err, dep.Calls())
	}
	in.Disable()
	if v, err := p.Do(context.Background(), dep.Call); v != "real" || err != nil || dep.Calls() != 1 {
		t.Errorf("off: Do = %q, %v, %d calls; want the real result", v, err, dep.Calls())
	}
	if got := p.String(); got != "chaos.result" {
		t.Errorf("name %q, want chaos.result", got)
	}
}

func TestPoliciesOffAllocs(t *testing.T) {
	for name, p := range off() {
		op := p.Wrap(func(context.Context) (int, error) { return 1, nil })
		if n := testing.AllocsPerRun(100, func() { _, _ = op(context.Background()) }); n != 0 {
			t.Errorf("%s off: a call allocates %v times, want 0", name, n)
		}
	}
	on := Fault[int](NewInjector(1), func(context.Context) error { return errInjected }).Wrap(func(context.Context) (int, error) { return 1, nil })
	if n := testing.AllocsPerRun(100, func() { _, _ = on(context.Background()) }); n != 0 {
		t.Errorf("fault on: a call allocates %v times, want 0", n)
	}
}

func TestNilArguments(t *testing.T) {
	in := NewInjector(1)
	wantPanic(t, "chaos: Fault needs", func() { Fault[int](nil, func(context.Context) error { return nil }) })
	wantPanic(t, "chaos: Fault needs", func() { Fault[int](in, nil) })
	wantPanic(t, "chaos: Latency needs", func() { Latency[int](in, nil, nil) })
	wantPanic(t, "chaos: Result needs", func() { Result[int](nil, func(context.Context) (int, error) { return 0, nil }) })
}

func TestLatencyCancelledDuringWait(t *testing.T) {
	fake := clock.NewFake()
	p := Latency[int](NewInjector(1), fake, func() time.Duration { return time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	ran := false
	go func() {
		_, err := p.Do(ctx, func(context.Context) (int, error) { ran = true; return 0, nil })
		errc <- err
	}()
	wait, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := fake.BlockUntil(wait, 1); err != nil {
		t.Fatal("the latency never waited on the clock")
	}
	cancel()
	select {
	case err := <-errc:
		if err != context.Canceled || ran {
			t.Errorf("Do = %v, op ran %v; want context.Canceled, false", err, ran)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the latency did not end with its context")
	}
}
