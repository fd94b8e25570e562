package resilienceprom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestBucketBounds: a duration equal to a bound counts in that bound's
// bucket (le: less or equal), one just above in the next; the sum is exact
// (kept in nanoseconds).
func TestBucketBounds(t *testing.T) {
	c := newCollector(t, resilienceprom.WithBuckets(0.01, 0.1))
	for _, w := range []time.Duration{10 * time.Millisecond, 10*time.Millisecond + 1, 100 * time.Millisecond, 100*time.Millisecond + 1} {
		c.Observe(telemetry.Event{Type: ratelimit.EventWaited, Name: "api", Wait: w})
	}
	want := `# HELP resilience_wait_duration_seconds Waits the policies reported: a retry's backoff, time in a bulkhead's queue, for a rate limiter's token.
# TYPE resilience_wait_duration_seconds histogram
resilience_wait_duration_seconds_bucket{event="ratelimit.waited",name="api",policy="ratelimit",le="0.01"} 1
resilience_wait_duration_seconds_bucket{event="ratelimit.waited",name="api",policy="ratelimit",le="0.1"} 3
resilience_wait_duration_seconds_bucket{event="ratelimit.waited",name="api",policy="ratelimit",le="+Inf"} 4
resilience_wait_duration_seconds_sum{event="ratelimit.waited",name="api",policy="ratelimit"} 0.220000002
resilience_wait_duration_seconds_count{event="ratelimit.waited",name="api",policy="ratelimit"} 4
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_wait_duration_seconds"); err != nil {
		t.Error(err)
	}
}
