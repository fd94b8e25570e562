package resilienceprom_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/f0b5b96b/resilience/resilienceprom"
	"github.com/f0b5b96b/resilience/resilienceprom/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// gathered returns the names of the metrics a Collector over reg gathers,
// sorted, and the help of each.
func gathered(t *testing.T, reg *telemetry.Registry) ([]string, map[string]string) {
	t.Helper()
	preg := prometheus.NewPedanticRegistry()
	if _, err := resilienceprom.New(preg, resilienceprom.WithRegistry(reg)); err != nil {
		t.Fatal(err)
	}
	mfs, err := preg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	help := make(map[string]string)
	for _, mf := range mfs {
		names = append(names, mf.GetName())
		help[mf.GetName()] = mf.GetHelp()
	}
	slices.Sort(names)
	return names, help
}

// TestValueMetricNames: a guard's value is the metric
// resilience_<kind>_<value>, then its unit's suffix (none for a count in
// braces or the ratio "1"; a known unit in words, plural before a "/",
// singular after it; another unit as itself), then _total for a counter
// that does not end so; characters a metric name may not hold are
// underscores.
func TestValueMetricNames(t *testing.T) {
	values := []telemetry.Value{
		{Name: "none", Unit: ""},
		{Name: "count", Unit: "{call}"},
		{Name: "ratio", Unit: "1"},
		{Name: "secs", Unit: "s"},
		{Name: "size", Unit: "By"},
		{Name: "rate", Unit: "{token}/s"},
		{Name: "hz", Unit: "1/s"},
		{Name: "ms", Unit: "ms"},
		{Name: "us", Unit: "us"},
		{Name: "ns", Unit: "ns"},
		{Name: "mins", Unit: "min"},
		{Name: "hours", Unit: "h"},
		{Name: "pct", Unit: "%"},
		{Name: "speed", Unit: "m/s"},
		{Name: "load", Unit: "By/min"},
		{Name: "nested", Unit: "{a{b}c}s"},
		{Name: "stray", Unit: "}s"},
		{Name: "slash", Unit: "s/"},
		{Name: "per", Unit: "/h"},
		{Name: "mass", Unit: "kg"},
		{Name: "ops", Unit: "{op}", Type: telemetry.CounterValue},
		{Name: "done_total", Type: telemetry.CounterValue},
		{Name: "busy", Unit: "s", Type: telemetry.CounterValue},
		{Name: "az_AZ09"},
		{Name: "`{@[/:"},
	}
	reg := telemetry.NewRegistry()
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "my-kind.x", Name: "g", Values: values}}); err != nil {
		t.Fatal(err)
	}
	got, _ := gathered(t, reg)
	want := []string{
		"resilience_exporter_dropped_series", "resilience_exporter_sanitized_series", "resilience_guard_refused_total",
		"resilience_my_kind_x_" + "______",
		"resilience_my_kind_x_az_AZ09",
		"resilience_my_kind_x_busy_seconds_total",
		"resilience_my_kind_x_count", "resilience_my_kind_x_done_total",
		"resilience_my_kind_x_hours_hours",
		"resilience_my_kind_x_hz_per_second",
		"resilience_my_kind_x_load_bytes_per_minute",
		"resilience_my_kind_x_mass_kg",
		"resilience_my_kind_x_mins_minutes",
		"resilience_my_kind_x_ms_milliseconds",
		"resilience_my_kind_x_nested_seconds",
		"resilience_my_kind_x_none",
		"resilience_my_kind_x_ns_nanoseconds",
		"resilience_my_kind_x_ops_total",
		"resilience_my_kind_x_pct_percent",
		"resilience_my_kind_x_per_per_hour",
		"resilience_my_kind_x_rate_per_second",
		"resilience_my_kind_x_ratio",
		"resilience_my_kind_x_secs_seconds",
		"resilience_my_kind_x_size_bytes",
		"resilience_my_kind_x_slash_seconds",
		"resilience_my_kind_x_speed_m_per_second",
		"resilience_my_kind_x_stray__s",
		"resilience_my_kind_x_us_microseconds",
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metric names mismatch (-want +got):\n%s", diff)
	}
}

// TestValueDefaultHelp: a value without help is described by its name
// and its guard's kind.
func TestValueDefaultHelp(t *testing.T) {
	reg := telemetry.NewRegistry()
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "mine", Name: "g", Values: []telemetry.Value{{Name: "depth", Value: 4}}}}); err != nil {
		t.Fatal(err)
	}
	c := newCollector(t, resilienceprom.WithRegistry(reg))
	want := `# HELP resilience_mine_depth The value depth of the registered guards of kind mine.
# TYPE resilience_mine_depth gauge
resilience_mine_depth{name="g"} 4
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "resilience_mine_depth"); err != nil {
		t.Error(err)
	}
}
