package resilienceotel_test

import (
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// attrSets returns the attribute sets of every data point of m.
func attrSets(m metricdata.Metrics) []attribute.Set {
	var out []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			out = append(out, p.Attributes)
		}
	}
	return out
}

// A name or key that is not valid UTF-8 (from a guard or event source of
// one's own, which no WithName checked) must not break an export: OTLP
// sends attribute values as protobuf strings, which must be valid UTF-8,
// and one bad value fails the whole batch. Every attribute value the
// Metrics reports is valid UTF-8: a bad one is sent with U+FFFD for its
// invalid bytes, counted in resilience.exporter.sanitized.
func TestInvalidUTF8NameIsSanitised(t *testing.T) {
	reg := telemetry.NewRegistry()
	guard := &exporttest.FakeGuard{S: telemetry.Snapshot{Kind: bulkhead.Kind, Name: "h"}}
	if err := reg.Register(guard); err != nil {
		t.Fatal(err)
	}
	guard.S.State = "h\xff" // a guard of one's own may say anything of its state (the registry checks names)
	m, reader := newMetrics(t, resilienceotel.WithRegistry(reg), resilienceotel.WithKeys(4))
	m.Observe(telemetry.Event{Type: breaker.EventFailure, Name: "db\xff"})
	m.Observe(telemetry.Event{Type: breaker.EventFailure, Name: "keyed", Key: "k\xfe"})
	m.Observe(telemetry.Event{Type: retry.EventWaiting, Name: "r\xff", Wait: 1})
	m.Observe(telemetry.Event{Type: breaker.EventFailure, Name: "ok"})

	got := collect(t, reader)
	seen := make(map[string]bool)
	for name, metric := range got {
		for _, set := range attrSets(metric) {
			for _, kv := range set.ToSlice() {
				v := kv.Value.String()
				if !utf8.ValidString(v) {
					t.Errorf("%s: attribute %s = %q is not valid UTF-8", name, kv.Key, v)
				}
				seen[string(kv.Key)+"="+v] = true
			}
		}
	}
	for _, want := range []string{
		"resilience.policy.name=db\uFFFD", "resilience.key=k\uFFFD", "resilience.policy.name=r\uFFFD",
		"resilience.guard.state=h\uFFFD", "resilience.policy.name=ok",
	} {
		if !seen[want] {
			t.Errorf("no series with %s", want)
		}
	}
	assertData(t, got, "resilience.exporter.sanitized", counter(pt[int64](4)))
}

// Measure rejects a name that is not valid UTF-8, naming itself.
func TestMeasureRejectsInvalidUTF8Name(t *testing.T) {
	c, _ := newMetrics(t)
	got := func() (msg any) {
		defer func() { msg = recover() }()
		resilienceotel.Measure[int](c, "db\xff", 1)
		return nil
	}()
	if want := `resilienceotel: Measure("db\xff"): name must be valid UTF-8`; got != want {
		t.Errorf("panic %v, want %q", got, want)
	}
}

// A guard's value whose unit or help is not valid UTF-8 must not break an
// export either (OTLP sends them as protobuf strings too): its instrument
// has U+FFFD for the invalid bytes, counted once each when the instrument
// is made.
func TestInvalidUTF8UnitAndHelpAreSanitised(t *testing.T) {
	reg := telemetry.NewRegistry()
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "mine", Name: "g", Values: []telemetry.Value{
		{Name: "depth", Unit: "{call\xff}", Help: "Calls \xfewaiting.", Value: 1},
		{Name: "ok", Unit: "s", Help: "Fine.", Value: 2},
	}}}); err != nil {
		t.Fatal(err)
	}
	_, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	got := collect(t, reader)
	for name, metric := range got {
		if !utf8.ValidString(metric.Unit) || !utf8.ValidString(metric.Description) {
			t.Errorf("%s: unit %q, description %q: not valid UTF-8", name, metric.Unit, metric.Description)
		}
	}
	type shape struct{ Unit, Description string }
	want := map[string]shape{
		"resilience.mine.depth": {"{call\uFFFD}", "Calls \uFFFDwaiting"},
		"resilience.mine.ok":    {"s", "Fine"},
	}
	for name, w := range want {
		if diff := cmp.Diff(w, shape{got[name].Unit, got[name].Description}); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", name, diff)
		}
	}
	assertData(t, got, "resilience.exporter.sanitized", counter(pt[int64](2)))
}

// invalidUTF8 fails t for every attribute value, unit and description of
// got that is not valid UTF-8.
func invalidUTF8(t *testing.T, got map[string]metricdata.Metrics) {
	t.Helper()
	for name, metric := range got {
		if !utf8.ValidString(metric.Unit) || !utf8.ValidString(metric.Description) {
			t.Errorf("%s: unit %q, description %q: not valid UTF-8", name, metric.Unit, metric.Description)
		}
		for _, set := range attrSets(metric) {
			for _, kv := range set.ToSlice() {
				if v := kv.Value.String(); !utf8.ValidString(v) {
					t.Errorf("%s: attribute %s = %q is not valid UTF-8", name, kv.Key, v)
				}
			}
		}
	}
}

// A guard's kind that is not valid UTF-8 (a guard of one's own: the
// registry checks names, not kinds) must not break an export: it is
// resilience.policy.type of resilience.guard.refused and
// resilience.guard.state, sent with U+FFFD for its invalid bytes and
// counted once per snapshot read, as a name is.
func TestInvalidUTF8KindIsSanitised(t *testing.T) {
	reg := telemetry.NewRegistry()
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "my\xffqueue", Name: "q", State: "open", Refused: 2}}); err != nil {
		t.Fatal(err)
	}
	_, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	for n := range 2 {
		got := collect(t, reader)
		invalidUTF8(t, got)
		kind, q := ptype("my\uFFFDqueue"), pname("q")
		assertData(t, got, "resilience.guard.refused", counter(pt[int64](2, kind, q)))
		assertData(t, got, "resilience.guard.state", igauge(pt[int64](1, kind, q, state("open"))))
		assertData(t, got, "resilience.exporter.sanitized", counter(pt(int64(n+1))))
	}
}

// An event whose Type is not valid UTF-8 (an event source of one's own)
// must not break an export, then or later: its type is event.name and its
// kind resilience.policy.type, sent with U+FFFD for the invalid bytes and
// counted once per event, as a name is; a duration event of such a type
// records its call as any other.
func TestInvalidUTF8EventTypeIsSanitised(t *testing.T) {
	m, reader := newMetrics(t, resilienceotel.WithKeys(4))
	m.Observe(telemetry.Event{Type: "my\xffqueue.dropped", Name: "q"})
	m.Observe(telemetry.Event{Type: "my\xffqueue.dropped", Name: "q"})
	m.Observe(telemetry.Event{Type: "my\xffqueue.dropped", Name: "q", Key: "k"})
	m.Observe(telemetry.Event{Type: "my\xffretry.call", Name: "r", Elapsed: time.Second})
	kind, q, typ := ptype("my\uFFFDqueue"), pname("q"), event("my\uFFFDqueue.dropped")
	for range 2 { // every later export too: the counters keep their series
		got := collect(t, reader)
		invalidUTF8(t, got)
		assertData(t, got, "resilience.events", counter(
			pt[int64](2, kind, q, typ),
			pt[int64](1, kind, q, typ, key("k")),
			pt[int64](1, ptype("my\uFFFDretry"), pname("r"), event("my\uFFFDretry.call")),
		))
		assertData(t, got, "resilience.calls", counter(pt[int64](1, ptype("pipeline"), pname("r"), outcome("success"))))
		assertData(t, got, "resilience.exporter.sanitized", counter(pt[int64](4)))
	}
}
