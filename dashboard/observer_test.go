package dashboard

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// With the registry as the pipeline's one observer, and no Measure layer
// in its chain, a tile has its calls, errors and latency (from the
// retry's attempt durations) and the pipeline its retries (from the
// events the registry passed on: no Options.Counter).
func TestOneObserverGivesLatency(t *testing.T) {
	f := clock.NewFake()
	reg := telemetry.NewRegistry()
	d := New(reg, &Options{Clock: f})
	b := breaker.New(breaker.WithName("prices"), breaker.WithClock(f), breaker.WithThreshold(100), breaker.WithObserver(reg))
	p := resilience.Then(
		retry.New[int](retry.WithName("prices"), retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)), retry.WithClock(f), retry.WithObserver(reg)),
		breaker.Policy[int](b),
	)
	if err := errors.Join(reg.Register(b), reg.RegisterPipeline("prices", p)); err != nil {
		t.Fatal(err)
	}
	snap(t, d, false)
	start := f.Now()
	ctx := context.Background()
	for range 8 {
		if _, err := p.Do(ctx, op(f, 2*time.Millisecond, nil)); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	flaky := func(ctx context.Context) (int, error) { // fails once after 5ms, then succeeds after 2ms
		if n++; n == 1 {
			f.Advance(5 * time.Millisecond)
			return 0, errBoom
		}
		f.Advance(2 * time.Millisecond)
		return 1, nil
	}
	if _, err := p.Do(ctx, flaky); err != nil {
		t.Fatal(err)
	}
	f.Advance(time.Second - f.Now().Sub(start)) // one Interval after the first snapshot

	s := snap(t, d, false)
	if len(s.Guards) != 1 {
		t.Fatalf("tiles %+v, want one: prices", s.Guards)
	}
	g := s.Guards[0]
	if diff := cmp.Diff([]*float64{ptr(10), ptr(1), ptr(10)}, []*float64{g.CallsPerSec, g.ErrorsPerSec, g.ErrorPct}); diff != "" {
		t.Errorf("calls/s, errors/s, error %% mismatch (-want +got):\n%s", diff)
	}
	if g.LatencyMs == nil {
		t.Fatal("latencyMs is null: the attempts' durations did not reach the tile")
	}
	if math.Abs(g.LatencyMs.P50-2) > 2*0.0625 || math.Abs(g.LatencyMs.P99-5) > 5*0.0625 {
		t.Errorf("latency %+v, want p50 ≈ 2 ms and p99 ≈ 5 ms (within the histogram's 6.25 %%)", *g.LatencyMs)
	}
	wantPipe := []pipeJSON{{Name: "prices", Chain: "retry(prices) > breaker(prices)", RetriesPerSec: ptr(1), FallbacksPerSec: ptr(0)}}
	if diff := cmp.Diff(wantPipe, s.Pipelines); diff != "" {
		t.Errorf("pipelines mismatch (-want +got):\n%s", diff)
	}
	for _, p := range s.Pipelines {
		if strings.Contains(p.Chain, "measure") {
			t.Errorf("pipeline %s's chain %q has a measure layer", p.Name, p.Chain)
		}
	}
}

// Without Options.Counter and before the registry has passed on an
// event, the numbers read from events are unknown (null), not 0.
func TestNoEventsYetIsUnknown(t *testing.T) {
	f := clock.NewFake()
	reg := telemetry.NewRegistry()
	d := New(reg, &Options{Clock: f})
	if err := reg.RegisterPipeline("p", retry.New[int](retry.WithName("p"))); err != nil {
		t.Fatal(err)
	}
	snap(t, d, false)
	f.Advance(time.Second)
	if p := snap(t, d, false).Pipelines[0]; p.RetriesPerSec != nil || p.FallbacksPerSec != nil {
		t.Fatalf("before any event: retries %v, fallbacks %v; want null", p.RetriesPerSec, p.FallbacksPerSec)
	}
	reg.Observe(telemetry.Event{Type: retry.EventWaiting, Name: "p"})
	f.Advance(time.Second)
	if p := snap(t, d, false).Pipelines[0]; p.RetriesPerSec == nil || *p.RetriesPerSec != 1 {
		t.Fatalf("after one retry.waiting through the registry: retries %v, want 1", p.RetriesPerSec)
	}
}

// A guard of one's own with a failure ratio gets its errors from its own
// "kind.failure" events: the dashboard names no kind.
func TestFailuresOfAnyKind(t *testing.T) {
	f := clock.NewFake()
	var events telemetry.Counter
	reg := telemetry.NewRegistry()
	d := New(reg, &Options{Counter: &events, Clock: f})
	g := newFake("mine", "db")
	g.set(func(s *telemetry.Snapshot) {
		s.Values = []telemetry.Value{{Name: "failure_ratio", Value: 0.5}, {Name: "window_calls", Value: 4}}
	})
	if err := reg.Register(g); err != nil {
		t.Fatal(err)
	}
	snap(t, d, false)
	for range 3 {
		events.Observe(telemetry.Event{Type: "mine.failure", Name: "db"})
	}
	f.Advance(time.Second)
	if e := snap(t, d, false).Guards[0].ErrorsPerSec; e == nil || *e != 3 {
		t.Fatalf("errors/s %v, want 3 (three mine.failure events in a second)", e)
	}
}

// An attempt's duration through the registry costs no allocation once its
// name has a meter and its window a histogram.
func TestObserveAttemptAllocs(t *testing.T) {
	f := clock.NewFake()
	reg := telemetry.NewRegistry()
	New(reg, &Options{Clock: f})
	e := telemetry.Event{Type: retry.EventAttempt, Name: "prices", Attempt: 1, Elapsed: time.Millisecond}
	reg.Observe(e)
	if n := testing.AllocsPerRun(100, func() { reg.Observe(e) }); n != 0 {
		t.Errorf("%v allocs per attempt event, want 0", n)
	}
}
