package resilienceprom_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/resilienceprom/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A guard of one's own is exported from what it describes: a metric per
// value, named from its kind, name, unit and type, with its help; a value
// that would take one of the Collector's own metric names is left out
// (and counted as dropped), not a failed scrape.
func TestGuardOfOwnKind(t *testing.T) {
	reg := telemetry.NewRegistry()
	for _, g := range []telemetry.Guard{
		exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "my-cache", Name: "users", State: "warming", Refused: 3, Values: []telemetry.Value{
			{Name: "entries", Unit: "{entry}", Help: "Entries cached now.", Value: 12},
			{Name: "hits", Unit: "{hit}", Type: telemetry.CounterValue, Help: "Hits since made.", Value: 40},
			{Name: "age", Unit: "s", Help: "Age of the oldest entry.", Value: 1.5},
			{Name: "load", Unit: "By/s", Help: "Bytes loaded per second.", Value: 2048},
		}}},
		exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "guard", Name: "odd", Values: []telemetry.Value{
			{Name: "refused", Type: telemetry.CounterValue, Help: "Named like the Collector's own.", Value: 1},
		}}},
	} {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}
	c := newCollector(t, resilienceprom.WithRegistry(reg))
	want := `# HELP resilience_my_cache_entries Entries cached now.
# TYPE resilience_my_cache_entries gauge
resilience_my_cache_entries{name="users"} 12
# HELP resilience_my_cache_hits_total Hits since made.
# TYPE resilience_my_cache_hits_total counter
resilience_my_cache_hits_total{name="users"} 40
# HELP resilience_my_cache_age_seconds Age of the oldest entry.
# TYPE resilience_my_cache_age_seconds gauge
resilience_my_cache_age_seconds{name="users"} 1.5
# HELP resilience_my_cache_load_bytes_per_second Bytes loaded per second.
# TYPE resilience_my_cache_load_bytes_per_second gauge
resilience_my_cache_load_bytes_per_second{name="users"} 2048
# HELP resilience_guard_state 1, with the state of a registered guard that has states (a breaker: closed, open, half-open) as its label, from its snapshot.
# TYPE resilience_guard_state gauge
resilience_guard_state{name="users",policy="my-cache",state="warming"} 1
# HELP resilience_guard_refused_total Calls a registered guard has refused since it was made, from its snapshot.
# TYPE resilience_guard_refused_total counter
resilience_guard_refused_total{name="odd",policy="guard"} 0
resilience_guard_refused_total{name="users",policy="my-cache"} 3
# HELP resilience_exporter_dropped_series Series of the last collection left out: they read as a series sent before (a name once sanitised, or a guard's value named as another kind's), a guard's value is named like one of the Collector's own metrics or from bytes that are not valid UTF-8 (its kind, name or unit), or a label is not valid UTF-8.
# TYPE resilience_exporter_dropped_series gauge
resilience_exporter_dropped_series 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"resilience_my_cache_entries", "resilience_my_cache_hits_total", "resilience_my_cache_age_seconds",
		"resilience_my_cache_load_bytes_per_second", "resilience_guard_state", "resilience_guard_refused_total",
		"resilience_exporter_dropped_series"); err != nil {
		t.Error(err)
	}
}

// A state that is not valid UTF-8 is sent sanitised, not dropped.
func TestGuardStateInvalidUTF8(t *testing.T) {
	reg := telemetry.NewRegistry()
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "mine", Name: "x", State: "w\xff"}}); err != nil {
		t.Fatal(err)
	}
	c := newCollector(t, resilienceprom.WithRegistry(reg))
	want := `# HELP resilience_guard_state 1, with the state of a registered guard that has states (a breaker: closed, open, half-open) as its label, from its snapshot.
# TYPE resilience_guard_state gauge
resilience_guard_state{name="x",policy="mine",state="w` + "\uFFFD" + `"} 1
# HELP resilience_exporter_sanitized_series Series of the last collection whose name was not valid UTF-8, sent with the invalid bytes replaced by U+FFFD.
# TYPE resilience_exporter_sanitized_series gauge
resilience_exporter_sanitized_series 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_guard_state", "resilience_exporter_sanitized_series"); err != nil {
		t.Error(err)
	}
}
