package pipeline_test

import (
	"fmt"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// A reload that drops a breaker's Threshold gives it the default, as a
// new breaker of that configuration would have: 5 consecutive failures,
// or none (the rule off) when a ratio rule is set.
func TestReloadToTheDefaultThreshold(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules string // the other settings, kept across the reload
		trips int    // the failures in a row that trip it after the reload; 0: none do
	}{
		{"no ratio rule", `"Cooldown": "1m"`, 5},
		{"a failure ratio", `"FailureRatio": 0.9, "MinCalls": 100`, 0},
		{"a slow-call ratio", `"SlowCallRatio": 0.9, "SlowCall": "1s", "MinCalls": 100`, 0},
	} {
		s := pipeline.NewSet[int](pipeline.WithClock(clock.NewFake()))
		mustApply(t, s, fmt.Appendf(nil, `{"guards": {"b": {"kind": "breaker", "config": {"Threshold": 3, %s}}}}`, tc.rules))
		b := s.Guard("b").(*breaker.Breaker)
		r := mustApply(t, s, fmt.Appendf(nil, `{"guards": {"b": {"kind": "breaker", "config": {%s}}}}`, tc.rules))
		if len(r.Changes) != 1 || r.Changes[0].Action != pipeline.Retuned {
			t.Fatalf("%s: reload changes = %v, want the breaker retuned", tc.name, r.Changes)
		}
		limit := tc.trips
		if limit == 0 {
			limit = 20
		}
		for i := 1; i <= limit; i++ {
			b.Record(true)
			if open := b.State() == breaker.Open; open != (i == tc.trips) {
				t.Fatalf("%s: after %d failures in a row the breaker is %v, want it to trip at %d (0: never)", tc.name, i, b.State(), tc.trips)
			}
			if i == tc.trips {
				break
			}
		}
	}
}
