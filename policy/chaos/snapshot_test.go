package chaos

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// recorder keeps the events it observes.
type recorder struct{ events []telemetry.Event }

func (r *recorder) Observe(e telemetry.Event) { r.events = append(r.events, e) }

// experiment runs, through an enabled injector of rate 1, two faults (one
// failing, one a behaviour), a latency on a canceled context, a made-up
// result and a call of Inject; then, the injector off, one call of each.
func experiment(t *testing.T, in *Injector) {
	t.Helper()
	fail := true
	fault := Fault[int](in, func(context.Context) error {
		if fail {
			fail = false
			return errInjected
		}
		return nil
	})
	latency := Latency[int](in, clock.NewFake(), func() time.Duration { return 3 * time.Second })
	result := Result[int](in, func(context.Context) (int, error) { return 0, errStale })
	op := func(context.Context) (int, error) { return 1, nil }
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	run := func() {
		_, _ = fault.Do(context.Background(), op)
		_, _ = fault.Do(context.Background(), op)
		_, _ = latency.Do(canceled, op)
		_, _ = result.Do(context.Background(), op)
		_ = in.Inject()
	}
	run()
	in.Disable()
	run()
}

var errStale = errors.New("stale")

// The injector is a telemetry.Guard: its snapshot counts the calls it
// decided while on and its injections by type, and says whether it is on.
func TestSnapshot(t *testing.T) {
	in := NewInjector(1, WithName("exp"))
	if s := in.Snapshot(); s.State != StateOn {
		t.Errorf("State of an enabled injector %q, want on", s.State)
	}
	experiment(t, in)
	s := in.Snapshot()
	if s.Kind != Kind || s.Name != "exp" || s.State != StateOff || s.Refused != 0 || s.Keys != nil || in.Name() != "exp" {
		t.Errorf("Snapshot = %+v, Name() %q; want kind chaos, name exp, state off, nothing refused", s, in.Name())
	}
	got := map[string]float64{}
	for _, v := range s.Values {
		if v.Help == "" || v.Unit == "" {
			t.Errorf("value %s does not describe itself: %+v", v.Name, v)
		}
		if want := telemetry.CounterValue; v.Name != "rate" && v.Type != want {
			t.Errorf("value %s is a %v, want a counter", v.Name, v.Type)
		}
		got[v.Name] = v.Value
	}
	want := map[string]float64{"rate": 1, "calls": 5, "injected_fault": 2, "injected_latency": 1, "injected_result": 1, "injected_other": 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Values mismatch (-want +got):\n%s", diff)
	}
	reg := telemetry.NewRegistry()
	if err := reg.Register(in); err != nil {
		t.Fatalf("Register = %v", err)
	}
	if err := reg.Register(NewInjector(0, WithName("exp"))); !errors.Is(err, telemetry.ErrDuplicate) {
		t.Errorf("Register of a second chaos injector named exp = %v, want ErrDuplicate", err)
	}
	if err := reg.Register(NewInjector(0)); !errors.Is(err, telemetry.ErrNoName) {
		t.Errorf("Register of an unnamed injector = %v, want ErrNoName", err)
	}
	if !reg.Unregister(in) {
		t.Error("Unregister = false, want true")
	}
}

// At a rate between 0 and 1, calls counts every call decided and the
// injections those that got chaos.
func TestSnapshotRate(t *testing.T) {
	random, _ := seeded(3)
	in := NewInjector(0.3, WithRandom(random))
	got := hits(in, 1000)
	s := in.Snapshot()
	calls, _ := s.Value("calls")
	other, _ := s.Value("injected_other")
	if calls != 1000 || other != float64(got) || got == 0 || got == 1000 {
		t.Errorf("calls %v, injected_other %v; want 1000 and the %d calls that got chaos", calls, other, got)
	}
}

// Each injection is one event, of its policy's type, named after the
// injector, with the fault's or result's error or the latency's delay;
// calls that get no chaos report nothing.
func TestEvents(t *testing.T) {
	var rec recorder
	in := NewInjector(1, WithName("exp"), WithObserver(&rec))
	experiment(t, in)
	want := []telemetry.Event{
		{Type: EventFault, Name: "exp", Err: errInjected},
		{Type: EventFault, Name: "exp"},
		{Type: EventLatency, Name: "exp", Wait: 3 * time.Second},
		{Type: EventResult, Name: "exp", Err: errStale},
		{Type: EventInjected, Name: "exp"},
	}
	if diff := cmp.Diff(want, rec.events, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	for _, e := range rec.events {
		if e.Kind() != Kind {
			t.Errorf("event %s of kind %q, want chaos", e.Type, e.Kind())
		}
	}
}

// A negative delay is reported as a wait of 0.
func TestEventLatencyNoDelay(t *testing.T) {
	var rec recorder
	in := NewInjector(1, WithObserver(&rec))
	_, _ = Latency[int](in, clock.NewFake(), func() time.Duration { return -time.Second }).Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
	want := []telemetry.Event{{Type: EventLatency}}
	if diff := cmp.Diff(want, rec.events); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// An injection reported to an observer allocates nothing; an injector
// that is off counts nothing.
func TestEventsAllocs(t *testing.T) {
	var events telemetry.Counter
	in := NewInjector(1, WithName("exp"), WithObserver(&events))
	op := Fault[int](in, func(context.Context) error { return errInjected }).Wrap(func(context.Context) (int, error) { return 1, nil })
	_, _ = op(context.Background()) // the counter's first event of this name copies its map
	if n := testing.AllocsPerRun(100, func() { _, _ = op(context.Background()) }); n != 0 {
		t.Errorf("an injection with an observer: %v allocs, want 0", n)
	}
	if n := events.Count("exp", EventFault); n != 102 {
		t.Errorf("%d chaos.fault events, want 102", n)
	}
	in.Disable()
	before := in.Snapshot()
	_, _ = op(context.Background())
	if diff := cmp.Diff(before, in.Snapshot()); diff != "" {
		t.Errorf("a call while off changed the snapshot (-before +after):\n%s", diff)
	}
}

func TestWithNameInvalid(t *testing.T) {
	wantPanic(t, `chaos: WithName("x\xff"): name must be valid UTF-8`, func() { WithName("x\xff") })
}
