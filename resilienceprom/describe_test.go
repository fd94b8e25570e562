package resilienceprom_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestDescribeOnce: Describe sends each description once, its own
// metrics' and those of the registered guards' values, though several
// guards of a kind share them.
func TestDescribeOnce(t *testing.T) {
	reg := telemetry.NewRegistry()
	for _, name := range []string{"a", "b", "c"} {
		if err := reg.Register(breaker.New(breaker.WithName(name))); err != nil {
			t.Fatal(err)
		}
	}
	c := newCollector(t, resilienceprom.WithRegistry(reg))
	ch := make(chan *prometheus.Desc, 1000)
	c.Describe(ch)
	close(ch)
	seen := make(map[string]int)
	for d := range ch {
		seen[d.String()]++
	}
	if len(seen) < 10 {
		t.Fatalf("Describe sent %d descriptions, want the Collector's and the breakers' values'", len(seen))
	}
	for d, n := range seen {
		if n != 1 {
			t.Errorf("Describe sent %s %d times, want once", d, n)
		}
	}
}
