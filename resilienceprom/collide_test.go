package resilienceprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/resilienceprom/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestValueCollisionLosesNoScrape: the values of guards of two kinds that
// give one metric name (kinds that read alike once sanitised, or a kind
// and a value name whose underscores fall differently) are not a failed
// scrape: the first series is sent, the one that reads as it is left out
// and counted in resilience_exporter_dropped_series.
func TestValueCollisionLosesNoScrape(t *testing.T) {
	c := collectorGathered(t, []exporttest.FakeGuard{
		{S: telemetry.Snapshot{Kind: "my-cache", Name: "users", Values: []telemetry.Value{{Name: "entries", Value: 1}}}},
		{S: telemetry.Snapshot{Kind: "my_cache", Name: "users", Values: []telemetry.Value{{Name: "entries", Value: 2}}}},
		{S: telemetry.Snapshot{Kind: "a_b", Name: "x", Values: []telemetry.Value{{Name: "c", Value: 3}}}},
		{S: telemetry.Snapshot{Kind: "a", Name: "x", Values: []telemetry.Value{{Name: "b_c", Value: 4}}}},
	})
	// The registry lists guards by name, then kind: "a" before "a_b",
	// "my-cache" before "my_cache".
	want := `# HELP resilience_a_b_c The value b_c of the registered guards of kind a.
# TYPE resilience_a_b_c gauge
resilience_a_b_c{name="x"} 4
# HELP resilience_my_cache_entries The value entries of the registered guards of kind my-cache.
# TYPE resilience_my_cache_entries gauge
resilience_my_cache_entries{name="users"} 1
# HELP resilience_exporter_dropped_series ` + droppedHelp + `
# TYPE resilience_exporter_dropped_series gauge
resilience_exporter_dropped_series 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_a_b_c", "resilience_my_cache_entries", "resilience_exporter_dropped_series"); err != nil {
		t.Error(err)
	}
}

// TestValidReplacementCharName: a valid name that holds U+FFFD and an
// invalid one that reads as it once sanitised are one series: the second
// of them is left out, in either order.
func TestValidReplacementCharName(t *testing.T) {
	for _, names := range [][]string{{"db\uFFFD", "db\xff"}, {"db\xff", "db\uFFFD"}} {
		c := newCollector(t)
		for _, n := range names {
			c.Observe(telemetry.Event{Type: breaker.EventOpened, Name: n})
		}
		preg := prometheus.NewRegistry()
		preg.MustRegister(c)
		if _, err := preg.Gather(); err != nil {
			t.Errorf("%q: Gather: %v", names, err)
			continue
		}
		want := "# HELP resilience_exporter_dropped_series Series of the last collection left out: they read as a series sent before (a name once sanitised, or a guard's value named as another kind's), a guard's value is named like one of the Collector's own metrics or from bytes that are not valid UTF-8 (its kind, name or unit), or a label is not valid UTF-8.\n" +
			"# TYPE resilience_exporter_dropped_series gauge\n" +
			"resilience_exporter_dropped_series 1\n"
		if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_exporter_dropped_series"); err != nil {
			t.Errorf("%q: %v", names, err)
		}
	}
}

// TestInvalidKindLosesNoScrape: a guard of one's own whose kind is not
// valid UTF-8 (the registry checks names, not kinds) has its series with
// a policy label left out and counted, not a failed scrape.
func TestInvalidKindLosesNoScrape(t *testing.T) {
	reg := telemetry.NewRegistry()
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "k\xff", Name: "g", State: "on"}}); err != nil {
		t.Fatal(err)
	}
	c := newCollector(t, resilienceprom.WithRegistry(reg))
	preg := prometheus.NewRegistry()
	preg.MustRegister(c)
	if _, err := preg.Gather(); err != nil {
		t.Fatalf("Gather: %v", err)
	}
	want := "# HELP resilience_exporter_dropped_series Series of the last collection left out: they read as a series sent before (a name once sanitised, or a guard's value named as another kind's), a guard's value is named like one of the Collector's own metrics or from bytes that are not valid UTF-8 (its kind, name or unit), or a label is not valid UTF-8.\n" +
		"# TYPE resilience_exporter_dropped_series gauge\n" +
		"resilience_exporter_dropped_series 2\n" // refused_total and guard_state
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_exporter_dropped_series"); err != nil {
		t.Error(err)
	}
}

// collectorGathered registers guards in a registry of their own and returns a
// Collector of it, after one Gather that must not fail.
func collectorGathered(t *testing.T, guards []exporttest.FakeGuard) *resilienceprom.Collector {
	t.Helper()
	reg := telemetry.NewRegistry()
	for _, g := range guards {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	c := newCollector(t, resilienceprom.WithRegistry(reg))
	preg := prometheus.NewRegistry()
	preg.MustRegister(c)
	if _, err := preg.Gather(); err != nil {
		t.Fatalf("Gather: %v", err)
	}
	return c
}
