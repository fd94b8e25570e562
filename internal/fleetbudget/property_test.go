package fleetbudget

import (
	"context"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience/clock"
)

// Whatever the number of instances, their executions, their demand for
// retries and the order of their flushes, a fleet whose instances each
// flush once per round keeps its retries within Ratio × its executions,
// plus the slack of one round: Ratio × the executions of the busiest
// round, and one retry per instance for rounding. The run stays within
// one window, so that nothing slides out.
func TestPropertyFleetBound(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(t, "instances")
		ratio := rapid.Float64Range(0.01, 1).Draw(t, "ratio")
		clk := clock.NewFake()
		store := NewMemStore(time.Hour, clk)
		inst := make([]*Budget, n)
		for i := range inst {
			inst[i] = New(Config{Ratio: ratio, Window: time.Hour, Clock: clk})
		}
		var execs, granted, busiest int64
		rounds := rapid.IntRange(1, 30).Draw(t, "rounds")
		for range rounds {
			var round int64
			for _, b := range inst {
				calls := rapid.IntRange(0, 50).Draw(t, "calls")
				want := rapid.IntRange(0, 3).Draw(t, "want")
				for range calls {
					b.Deposit()
					round++
					for range want {
						if b.Withdraw() {
							granted++
						}
					}
				}
			}
			execs += round
			busiest = max(busiest, round)
			for _, i := range rapid.Permutation(rangeN(n)).Draw(t, "flush order") {
				if err := inst[i].Flush(context.Background(), store); err != nil {
					t.Fatal(err)
				}
			}
			clk.Advance(time.Duration(rapid.IntRange(0, 1000).Draw(t, "advance ms")) * time.Millisecond)
		}
		if limit := ratio*float64(execs) + ratio*float64(busiest) + float64(n); float64(granted) > limit {
			t.Fatalf("granted %d retries for %d executions (busiest round %d), want at most %v", granted, execs, busiest, limit)
		}
	})
}

func rangeN(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
