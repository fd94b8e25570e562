package resilienceprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/resilienceprom/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestValuesNamedLikeOwnMetrics: a guard's value whose metric name is one
// of the Collector's own metrics' (each of the nine) is left out and
// counted, and the Collector's own metric keeps its name, labels and help.
func TestValuesNamedLikeOwnMetrics(t *testing.T) {
	sec := func(name string) telemetry.Value { return telemetry.Value{Name: name, Unit: "s", Value: 1} }
	reg := telemetry.NewRegistry()
	for kind, values := range map[telemetry.Kind][]telemetry.Value{
		"calls":    {{Name: "total", Value: 1}},
		"events":   {{Name: "total", Value: 1}},
		"call":     {sec("duration")},
		"attempt":  {sec("duration")},
		"wait":     {sec("duration")},
		"guard":    {{Name: "refused", Type: telemetry.CounterValue, Value: 1}, {Name: "state", Value: 1}},
		"exporter": {{Name: "sanitized_series", Value: 1}, {Name: "dropped_series", Value: 1}},
	} {
		if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: kind, Name: "g", Values: values}}); err != nil {
			t.Fatal(err)
		}
	}
	c := newCollector(t, resilienceprom.WithRegistry(reg)) // a pedantic registry: the descriptions agree
	want := "# HELP resilience_exporter_dropped_series Series of the last collection left out: they read as a series sent before (a name once sanitised, or a guard's value named as another kind's), a guard's value is named like one of the Collector's own metrics or from bytes that are not valid UTF-8 (its kind, name or unit), or a label is not valid UTF-8.\n" +
		"# TYPE resilience_exporter_dropped_series gauge\n" +
		"resilience_exporter_dropped_series 9\n"
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_exporter_dropped_series"); err != nil {
		t.Error(err)
	}
}
