package resilienceredis

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/google/go-cmp/cmp"
)

// The zero fields of RetryBudgetConfig mean their documented defaults:
// Ratio 0.2 (two retries for ten executions, before any flush: the
// instance's own executions), MinPerSecond 10 (ten retries over a window
// of 1 s with no execution at all), Prefix "resilience:" (the key in
// Redis). A Ratio or MinPerSecond that is set is kept.
func TestRetryBudgetDefaults(t *testing.T) {
	rdb := newClient(t)
	grants := func(b *RetryBudget, deposits, asks int) int {
		for range deposits {
			b.Deposit()
		}
		n := 0
		for range asks {
			if b.Withdraw() {
				n++
			}
		}
		return n
	}
	opts := func(more ...RetryBudgetOption) []RetryBudgetOption {
		return append([]RetryBudgetOption{WithPrefix(testPrefix(t)), WithTimeout(5 * time.Second)}, more...)
	}
	tests := []struct {
		name           string
		opts           []RetryBudgetOption
		deposits, asks int
		want           int
	}{
		{"Ratio 0 is 0.2", opts(WithMinPerSecond(resilience.Off)), 10, 10, 2},
		{"Ratio 1 is kept", opts(WithRatio(1), WithMinPerSecond(resilience.Off)), 10, 10, 10},
		{"MinPerSecond 0 is 10", opts(WithRatio(resilience.Off), WithWindow(time.Second)), 0, 11, 10},
		{"MinPerSecond 1 is kept", opts(WithRatio(resilience.Off), WithMinPerSecond(1), WithWindow(time.Second)), 0, 11, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newRetryBudget(rdb, "defaults", tt.opts)
			if got := grants(b, tt.deposits, tt.asks); got != tt.want {
				t.Errorf("%d of %d retries granted after %d executions, want %d", got, tt.asks, tt.deposits, tt.want)
			}
		})
	}

	t.Run("Prefix", func(t *testing.T) {
		name := "defaultprefix-" + strconv.FormatInt(time.Now().UnixNano(), 36)
		key := "resilience:rb:{" + name + "}"
		t.Cleanup(func() { rdb.Del(context.Background(), key) })
		b := newRetryBudget(rdb, name, []RetryBudgetOption{WithTimeout(5 * time.Second)})
		b.Deposit()
		if !b.flush(true) {
			t.Fatalf("flush failed: %v", b.why())
		}
		if n, err := rdb.Exists(context.Background(), key).Result(); err != nil || n != 1 {
			t.Fatalf("EXISTS %s = %d, %v; want the budget's counts under the default prefix", key, n, err)
		}
		if diff := cmp.Diff([2]int64{1, 0}, func() [2]int64 { c, r := fleetTotals(t, rdb, b); return [2]int64{c, r} }()); diff != "" {
			t.Errorf("the counts under %s {executions, retries} mismatch (-want +got):\n%s", key, diff)
		}
	})
}
