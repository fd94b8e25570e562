package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A Scenario's zero Duration means 1 minute and its zero Bucket
// Duration/200, at least 1ms; a Bucket given is kept, and the series has
// one entry per bucket started in the run.
func TestScenarioDefaults(t *testing.T) {
	type shape struct {
		Duration, Bucket time.Duration
		Buckets          int
	}
	for _, c := range []struct {
		s    Scenario
		want shape
	}{
		{Scenario{}, shape{time.Minute, 300 * time.Millisecond, 200}},
		{Scenario{Duration: 2 * time.Second}, shape{2 * time.Second, 10 * time.Millisecond, 200}},
		{Scenario{Duration: 100 * time.Millisecond}, shape{100 * time.Millisecond, time.Millisecond, 100}},
		{Scenario{Duration: 250 * time.Millisecond}, shape{250 * time.Millisecond, 1250 * time.Microsecond, 200}},
		{Scenario{Duration: time.Second, Bucket: 300 * time.Millisecond}, shape{time.Second, 300 * time.Millisecond, 4}},
	} {
		c.s.Clients = []Clients{{Calls: 1}}
		r := Run(c.s, PolicySet[int]{Build: identity})
		got := shape{r.Duration, r.Bucket, len(r.Series)}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("Duration %v, Bucket %v: mismatch (-want +got):\n%s", c.s.Duration, c.s.Bucket, diff)
		}
	}
}
