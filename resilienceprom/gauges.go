package resilienceprom

import (
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/f0b5b96b/resilience/telemetry"
)

// values are the descriptions of the registered guards' values, made
// from what each value says of itself the first time a value of its
// metric name is seen, and kept: the guards' kinds and value names are
// few.
type values struct {
	mu    sync.Mutex
	descs map[string]*prometheus.Desc // by metric name; nil: the name is taken by another metric
}

// desc returns the description of the metric of v, a value of a guard of
// kind, making it the first time; nil if its name is one of the
// Collector's own metrics, or would be made from bytes that are not valid
// UTF-8 (in kind, v's name or v's unit): a metric name cannot show U+FFFD,
// and the underscore those bytes would become reads as another guard's
// metric.
func (vs *values) desc(kind telemetry.Kind, v *telemetry.Value) *prometheus.Desc {
	if !utf8.ValidString(string(kind)) || !utf8.ValidString(v.Name) || !utf8.ValidString(v.Unit) {
		return nil
	}
	name := valueMetric(kind, v)
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if d, ok := vs.descs[name]; ok {
		return d
	}
	if vs.descs == nil {
		vs.descs = make(map[string]*prometheus.Desc)
	}
	var d *prometheus.Desc
	if !ownMetrics[name] {
		help := v.Help
		if help == "" {
			help = "The value " + v.Name + " of the registered guards of kind " + string(kind) + "."
		}
		d = prometheus.NewDesc(name, help, []string{"name"}, nil)
	}
	vs.descs[name] = d
	return d
}

// ownMetrics are the names of the Collector's own metrics, which no
// guard's value may take.
var ownMetrics = map[string]bool{
	"resilience_calls_total": true, "resilience_events_total": true, "resilience_call_duration_seconds": true,
	"resilience_attempt_duration_seconds": true, "resilience_wait_duration_seconds": true,
	"resilience_guard_refused_total": true, "resilience_guard_state": true,
	"resilience_exporter_sanitized_series": true, "resilience_exporter_dropped_series": true,
}

// valueMetric returns the metric name of v, a value of a guard of kind:
// resilience_<kind>_<name>, then the unit's suffix (see unitSuffix), then
// _total for a counter; characters that a metric name may not hold are
// underscores.
func valueMetric(kind telemetry.Kind, v *telemetry.Value) string {
	name := "resilience_" + sanitize(string(kind)) + "_" + sanitize(v.Name) + unitSuffix(v.Unit)
	if v.Type == telemetry.CounterValue && !strings.HasSuffix(name, "_total") {
		name += "_total"
	}
	return name
}

// unitSuffix returns the suffix a unit (UCUM, as OpenTelemetry writes it)
// gives a metric name: "" for a count ("{call}") or a ratio ("1"),
// "_seconds" for "s", "_bytes" for "By", "_per_second" for "{token}/s";
// another unit as itself.
func unitSuffix(unit string) string {
	var b strings.Builder
	depth := 0
	for _, r := range unit { // annotations in braces say what is counted: no unit
		switch {
		case r == '{':
			depth++
		case r == '}' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	u := b.String()
	if u == "" || u == "1" {
		return ""
	}
	num, den, per := strings.Cut(u, "/")
	s := ""
	if num != "" && num != "1" {
		s = "_" + unitWord(num, true)
	}
	if per && den != "" {
		s += "_per_" + unitWord(den, false)
	}
	return s
}

// unitWord names a unit in a metric name, plural or not.
func unitWord(u string, plural bool) string {
	words := map[string][2]string{
		"s": {"second", "seconds"}, "ms": {"millisecond", "milliseconds"}, "us": {"microsecond", "microseconds"},
		"ns": {"nanosecond", "nanoseconds"}, "min": {"minute", "minutes"}, "h": {"hour", "hours"},
		"By": {"byte", "bytes"}, "%": {"percent", "percent"},
	}
	if w, ok := words[u]; ok {
		if plural {
			return w[1]
		}
		return w[0]
	}
	return sanitize(u)
}

// sanitize returns s with each character that a metric name may not hold
// (other than ASCII letters, digits and underscores) an underscore.
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}
