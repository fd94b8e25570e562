package resilienceprom_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/resilienceprom"
)

// TestMeasureCallDuration: each call through a Measure's Call layer
// records its duration, on the Collector's clock, in
// resilience_call_duration_seconds by outcome.
func TestMeasureCallDuration(t *testing.T) {
	clk := clock.NewFake()
	c := newCollector(t, resilienceprom.WithClock(clk), resilienceprom.WithBuckets(0.1, 1))
	m := resilienceprom.Measure[int](c, "prices", 1)
	for _, d := range []time.Duration{50 * time.Millisecond, 2 * time.Second} {
		_, _ = m.Call.Do(context.Background(), func(context.Context) (int, error) {
			clk.Advance(d)
			return 1, nil
		})
	}
	_, _ = m.Call.Do(context.Background(), func(context.Context) (int, error) {
		clk.Advance(500 * time.Millisecond)
		return 0, downError{}
	})
	want := "# HELP resilience_call_duration_seconds Duration of calls (a retry's calls, or through a Measure layer), retries and waits included.\n" +
		"# TYPE resilience_call_duration_seconds histogram\n" +
		histogram("resilience_call_duration_seconds", `name="prices",outcome="failure"`, []float64{0.1, 1}, 0.5) +
		histogram("resilience_call_duration_seconds", `name="prices",outcome="success"`, []float64{0.1, 1}, 0.05, 2)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_call_duration_seconds"); err != nil {
		t.Error(err)
	}
}
