package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// A Result's Totals are over the whole run, and its Series the totals of
// each bucket: the buckets add up to the run's Totals, field by field, in
// a run where every count moves (refusals by a guard, overloads, outages
// of both modes, conflicts, calls cut short by the end).
func TestSeriesAddUpToTheTotals(t *testing.T) {
	errGuard := errors.New("guard")
	n := 0
	r := Run(Scenario{
		Duration: 2 * time.Second,
		Bucket:   100 * time.Millisecond,
		Server: Server{Base: 10 * time.Millisecond, Slope: 5 * time.Millisecond, Capacity: 3, Conflicts: true,
			Outages: []Outage{{Start: 500 * time.Millisecond, End: 700 * time.Millisecond, Mode: Down},
				{Start: 1900 * time.Millisecond, End: time.Hour, Mode: Hang}}},
		Clients: []Clients{{N: 6, Ramp: 50 * time.Millisecond, Think: 5 * time.Millisecond}},
	}, PolicySet[int]{Name: "every count", Build: func(*Env) resilience.Policy[int] {
		return resilience.New("guard", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			if n++; n%7 == 0 {
				return 0, resilience.Refuse(&refusal{errGuard}, "guard", -1)
			}
			return next.Call(ctx)
		})
	}})
	for name, v := range map[string]int{"Successes": r.Successes, "Refused": r.Refused, "Failures": r.Failures, "Unfinished": r.Unfinished,
		"Overloaded": r.Overloaded, "Down": r.Down, "Conflicts": r.Conflicts} {
		if v == 0 {
			t.Errorf("%s is 0: the run does not exercise it (%+v)", name, r.Totals)
		}
	}
	if r.Calls != r.Successes+r.Refused+r.Failures || r.Calls != len(r.Latencies) {
		t.Errorf("%+v with %d latencies: Calls is not Successes + Refused + Failures, one latency each", r.Totals, len(r.Latencies))
	}
	if diff := cmp.Diff(r.Totals, r.Window(0, r.Duration)); diff != "" {
		t.Errorf("the buckets against the totals: mismatch (-want +got):\n%s", diff)
	}
}

// refusal is a guard's sentinel: it matches resilience.ErrRefused.
type refusal struct{ error }

func (*refusal) Is(target error) bool { return target == resilience.ErrRefused }
