package resilienceredis

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The fleet's counts in Redis slide with the Window: counts flushed more
// than a Window ago are out of the totals (their fields deleted at the
// next flush), while the key lives on (2 × Window after the last counts).
func TestRetryBudgetWindowSlides(t *testing.T) {
	rdb := newClient(t)
	b := newRetryBudget(rdb, "window", []RetryBudgetOption{WithPrefix(testPrefix(t)), WithTimeout(5 * time.Second), WithWindow(time.Second)})
	for range 100 {
		b.Deposit()
	}
	if !b.flush(true) {
		t.Fatalf("flush failed: %v", b.why())
	}
	time.Sleep(1100 * time.Millisecond) // past the Window, within the key's 2 s
	b.Deposit()
	if !b.flush(true) {
		t.Fatalf("flush failed: %v", b.why())
	}
	c, r := fleetTotals(t, rdb, b)
	if diff := cmp.Diff([2]int64{1, 0}, [2]int64{c, r}); diff != "" {
		t.Errorf("Redis's counts {executions, retries} a Window after the first 100 mismatch (-want +got):\n%s", diff)
	}
}
