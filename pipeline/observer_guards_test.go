package pipeline_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/telemetry"
)

// An adaptive limiter's and a throttler's refusals reach the Set's
// observer, as every other guard's events do.
func TestDocumentAdaptiveAndThrottleReportToTheSetsObserver(t *testing.T) {
	var mu sync.Mutex
	seen := map[telemetry.Type]string{}
	obs := telemetry.ObserverFunc(func(e telemetry.Event) { mu.Lock(); seen[e.Type] = e.Name; mu.Unlock() })
	s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()), pipeline.WithObserver(obs))
	mustApply(t, s, []byte(`{"guards": {
		"a": {"kind": "adaptive", "config": {"Min": 1, "Max": 1, "Initial": 1}},
		"t": {"kind": "throttle", "config": {"K": 1}}}}`))
	a := s.Guard("a").(*adaptive.Limiter)
	held, err := a.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Acquire(context.Background()); err == nil {
		t.Fatal("adaptive: a second call over the limit of 1 was admitted")
	}
	held.Done(nil)
	// Every request fails: the throttler refuses with a probability near
	// 1 after a few; the loop is bounded.
	th := s.Guard("t").(*throttle.Throttler)
	refused := false
	for i := 0; i < 10000 && !refused; i++ {
		p, err := th.Allow()
		if err != nil {
			refused = true
			break
		}
		p.Done(errors.New("down"))
	}
	if !refused {
		t.Fatal("throttle: no refusal in 10000 failing requests")
	}
	mu.Lock()
	defer mu.Unlock()
	for typ, name := range map[telemetry.Type]string{adaptive.EventRefused: "a", throttle.EventRefused: "t"} {
		if got, ok := seen[typ]; !ok || got != name {
			t.Errorf("the Set's observer saw no %s event from %q (events seen, with their names: %v)", typ, name, seen)
		}
	}
}
