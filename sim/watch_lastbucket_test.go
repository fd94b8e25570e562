package sim

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/google/go-cmp/cmp"
)

// A run whose Duration is not a whole number of Buckets has a shorter last
// bucket, and the watched breaker's state is read at its end, the end of
// the run, like every other bucket's.
func TestWatchReadsTheShortLastBucket(t *testing.T) {
	c, o := breaker.Closed, breaker.Open
	got := forcedOpenSeries(t, 2500*time.Millisecond, 2*time.Second)
	if diff := cmp.Diff([]breaker.State{c, c, o}, got); diff != "" {
		t.Errorf("breaker series mismatch (-want +got):\n%s", diff)
	}
}
