package resilienceprom_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestWithBucketsRejects: WithBuckets panics, naming the bounds, unless
// they are finite (no NaN, no infinity of either sign, anywhere) and
// strictly increasing.
func TestWithBucketsRejects(t *testing.T) {
	for _, bounds := range [][]float64{
		{math.NaN()}, {math.Inf(1)}, {math.Inf(-1)},
		{1, math.NaN()}, {1, math.Inf(1)}, {math.Inf(-1), 1},
		{2, 1}, {1, 2, 2}, {1, 3, 2},
	} {
		func() {
			want := fmt.Sprintf("resilienceprom: WithBuckets bounds must be finite and increasing, got %v", bounds)
			defer func() {
				if r := recover(); r != want {
					t.Errorf("WithBuckets(%v): panic %v, want %q", bounds, r, want)
				}
			}()
			resilienceprom.WithBuckets(bounds...)
		}()
	}
}

// TestWithBucketsAccepts: one bound is enough, bounds may be negative or
// zero, and DefaultBuckets are valid bounds.
func TestWithBucketsAccepts(t *testing.T) {
	for _, bounds := range [][]float64{{0.5}, {-1, 0, 1}, {0, 1e-9}, resilienceprom.DefaultBuckets} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("WithBuckets(%v): panic %v", bounds, r)
				}
			}()
			resilienceprom.WithBuckets(bounds...)
		}()
	}
}

// TestWithBucketsCopies: the Collector keeps its own copy of the bounds,
// so changing the caller's slice later changes nothing; one bound gives a
// histogram of that bucket and +Inf.
func TestWithBucketsCopies(t *testing.T) {
	bounds := []float64{0.5}
	c := newCollector(t, resilienceprom.WithBuckets(bounds...))
	bounds[0] = 0.001
	c.Observe(telemetry.Event{Type: ratelimit.EventWaited, Name: "api", Wait: 100 * time.Millisecond})
	c.Observe(telemetry.Event{Type: ratelimit.EventWaited, Name: "api", Wait: time.Second})
	want := "# HELP resilience_wait_duration_seconds Waits the policies reported: a retry's backoff, time in a bulkhead's queue, for a rate limiter's token.\n" +
		"# TYPE resilience_wait_duration_seconds histogram\n" +
		histogram("resilience_wait_duration_seconds", `event="ratelimit.waited",name="api",policy="ratelimit"`, []float64{0.5}, 0.1, 1)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_wait_duration_seconds"); err != nil {
		t.Error(err)
	}
}

// TestDefaultBuckets: without WithBuckets, the histograms have the
// buckets of DefaultBuckets, 5 ms to 10 s.
func TestDefaultBuckets(t *testing.T) {
	c := newCollector(t)
	if got := resilienceprom.DefaultBuckets; got[0] != 0.005 || got[len(got)-1] != 10 {
		t.Errorf("DefaultBuckets = %v, want 5 ms to 10 s", got)
	}
	c.Observe(telemetry.Event{Type: ratelimit.EventWaited, Name: "api", Wait: time.Second})
	want := "# HELP resilience_wait_duration_seconds Waits the policies reported: a retry's backoff, time in a bulkhead's queue, for a rate limiter's token.\n" +
		"# TYPE resilience_wait_duration_seconds histogram\n" +
		histogram("resilience_wait_duration_seconds", `event="ratelimit.waited",name="api",policy="ratelimit"`, resilienceprom.DefaultBuckets, 1)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_wait_duration_seconds"); err != nil {
		t.Error(err)
	}
}
