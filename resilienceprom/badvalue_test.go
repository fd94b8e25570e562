package resilienceprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/f0b5b96b/resilience/resilienceprom/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestInvalidUTF8ValueMetricLeftOut: a guard's value whose metric name
// would come from bytes that are not valid UTF-8 — its guard's kind, its
// own name or its unit — is left out and counted in
// resilience_exporter_dropped_series, like the guard's state and refused
// series of such a kind: a metric name cannot show U+FFFD, and the
// underscore the bytes would become reads as another guard's metric. The
// scrape goes on, and the guard's valid values are served.
func TestInvalidUTF8ValueMetricLeftOut(t *testing.T) {
	c := collectorGathered(t, []exporttest.FakeGuard{
		{S: telemetry.Snapshot{Kind: "mi\xffne", Name: "ok2", State: "on", Values: []telemetry.Value{{Name: "v", Value: 1}}}},
		{S: telemetry.Snapshot{Kind: "mine", Name: "g", Values: []telemetry.Value{
			{Name: "v\xff", Value: 2}, {Name: "w", Unit: "s\xff", Value: 3}, {Name: "ok", Value: 4},
		}}},
	})
	want := `# HELP resilience_mine_ok The value ok of the registered guards of kind mine.
# TYPE resilience_mine_ok gauge
resilience_mine_ok{name="g"} 4
# HELP resilience_exporter_dropped_series ` + droppedHelp + `
# TYPE resilience_exporter_dropped_series gauge
resilience_exporter_dropped_series 5
# HELP resilience_exporter_sanitized_series Series of the last collection whose name was not valid UTF-8, sent with the invalid bytes replaced by U+FFFD.
# TYPE resilience_exporter_sanitized_series gauge
resilience_exporter_sanitized_series 0
`
	// 5 left out: mi\xffne's refused, state and value v; mine's v\xff and w (unit s\xff).
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"resilience_mi_ne_v", "resilience_mine_v_", "resilience_mine_w_s_", "resilience_mine_ok",
		"resilience_exporter_dropped_series", "resilience_exporter_sanitized_series"); err != nil {
		t.Error(err)
	}
}

// droppedHelp is the help of resilience_exporter_dropped_series.
const droppedHelp = "Series of the last collection left out: they read as a series sent before (a name once sanitised, or a guard's value named as another kind's), a guard's value is named like one of the Collector's own metrics or from bytes that are not valid UTF-8 (its kind, name or unit), or a label is not valid UTF-8."
