package resilienceotel_test

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// allTypes is every event type of package telemetry's table, with the
// fields that table gives it; see exporttest.AllTypes.
var allTypes = exporttest.AllTypes(downError{})

// TestEveryEventType observes one event of every type in the telemetry
// table, each from a policy named "x": each counts in resilience.events
// under its kind and name; those that are a call's outcome count in
// resilience.calls too (breaker failure, ignored and refused; a retry's
// give-up; a timeout's expiry; a bulkhead's and a rate limiter's
// rejection), and those with a wait record it. A breaker.Keyed's
// breaker.evicted is neither: it counts in resilience.events only, under
// the breaker kind, without resilience.key (off without WithKeys).
func TestEveryEventType(t *testing.T) {
	m, reader := newMetrics(t)
	for _, e := range allTypes {
		e.Name = "x"
		m.Observe(e)
	}
	got := collect(t, reader)
	x := pname("x")
	assertData(t, got, "resilience.events", counter(
		pt[int64](1, ptype("breaker"), x, event(breaker.EventOpened)),
		pt[int64](1, ptype("breaker"), x, event(breaker.EventHalfOpened)),
		pt[int64](1, ptype("breaker"), x, event(breaker.EventClosed)),
		pt[int64](1, ptype("breaker"), x, event(breaker.EventRefused), errtype("breaker.open")),
		pt[int64](1, ptype("breaker"), x, event(breaker.EventFailure)),
		pt[int64](1, ptype("breaker"), x, event(breaker.EventIgnored), errtype("*errors.errorString")),
		pt[int64](1, ptype("breaker"), x, event(breaker.EventEvicted)),
		pt[int64](1, ptype("retry"), x, event(retry.EventAttemptFailed), errtype(downType)),
		pt[int64](1, ptype("retry"), x, event(retry.EventWaiting), errtype(downType)),
		pt[int64](1, ptype("retry"), x, event(retry.EventGaveUp), errtype("retry.attempts")),
		pt[int64](1, ptype("retry"), x, event(retry.EventAttempt)),
		pt[int64](1, ptype("retry"), x, event(retry.EventCall)),
		pt[int64](1, ptype("timeout"), x, event(timeout.EventExpired)),
		pt[int64](1, ptype("timeout"), x, event(timeout.EventAbandoned)),
		pt[int64](1, ptype("hedge"), x, event(hedge.EventLaunched)),
		pt[int64](1, ptype("hedge"), x, event(hedge.EventWon)),
		pt[int64](1, ptype("hedge"), x, event(hedge.EventLosersCancelled)),
		pt[int64](1, ptype("bulkhead"), x, event(bulkhead.EventQueuedAdmitted)),
		pt[int64](1, ptype("bulkhead"), x, event(bulkhead.EventRefused), errtype("bulkhead.queue_timeout")),
		pt[int64](1, ptype("ratelimit"), x, event(ratelimit.EventRefused), errtype("ratelimit.limited")),
		pt[int64](1, ptype("ratelimit"), x, event(ratelimit.EventWaited)),
		pt[int64](1, ptype("fallback"), x, event(resilience.EventFallbackUsed), errtype(downType)),
	))
	assertData(t, got, "resilience.calls", counter(
		pt[int64](1, ptype("breaker"), x, outcome("rejected"), errtype("breaker.open")),
		pt[int64](1, ptype("breaker"), x, outcome("failure")),
		pt[int64](1, ptype("breaker"), x, outcome("ignored"), errtype("*errors.errorString")),
		pt[int64](1, ptype("retry"), x, outcome("failure"), errtype("retry.attempts")),
		pt[int64](1, ptype("pipeline"), x, outcome("success")), // retry.call
		pt[int64](1, ptype("timeout"), x, outcome("failure")),
		pt[int64](1, ptype("bulkhead"), x, outcome("rejected"), errtype("bulkhead.queue_timeout")),
		pt[int64](1, ptype("ratelimit"), x, outcome("rejected"), errtype("ratelimit.limited")),
	))
	assertData(t, got, "resilience.wait.duration", histogram(
		hpt([]float64{0.2}, ptype("retry"), x, event(retry.EventWaiting)),
		hpt([]float64{0.03}, ptype("bulkhead"), x, event(bulkhead.EventQueuedAdmitted)),
		hpt([]float64{0.1}, ptype("bulkhead"), x, event(bulkhead.EventRefused)),
		hpt([]float64{0.01}, ptype("ratelimit"), x, event(ratelimit.EventWaited)),
	))
}

// TestWaitsNotRecorded: a bulkhead rejection without a wait in the queue
// (full, no queue) and a wait of resilience.Never are counted, not
// recorded as waits.
func TestWaitsNotRecorded(t *testing.T) {
	m, reader := newMetrics(t)
	m.Observe(telemetry.Event{Type: bulkhead.EventRefused, Name: "db", Err: resilience.Refuse(bulkhead.ErrFull, "db", -1)})
	m.Observe(telemetry.Event{Type: retry.EventWaiting, Name: "r", Wait: resilience.Never})
	got := collect(t, reader)
	assertData(t, got, "resilience.events", counter(
		pt[int64](1, ptype("bulkhead"), pname("db"), event(bulkhead.EventRefused), errtype("bulkhead.full")),
		pt[int64](1, ptype("retry"), pname("r"), event(retry.EventWaiting)),
	))
	if w, ok := got["resilience.wait.duration"]; ok {
		if h := w.Data.(metricdata.Histogram[float64]); len(h.DataPoints) > 0 {
			t.Errorf("resilience.wait.duration has %d points, want none", len(h.DataPoints))
		}
	}
}

// TestKeys: with WithKeys(2), a keyed limiter's first two keys keep their
// value and the others read "_OTHER", per guard; without it, keys are no
// attribute. A breaker.Keyed's events, breaker.evicted among them, carry
// their key the same way.
func TestKeys(t *testing.T) {
	rejected := func(name, k string) telemetry.Event {
		return telemetry.Event{Type: ratelimit.EventWaited, Name: name, Key: k, Wait: time.Millisecond}
	}
	t.Run("on", func(t *testing.T) {
		m, reader := newMetrics(t, resilienceotel.WithKeys(2))
		for _, k := range []string{"a", "b", "c", "d", "a", "evil-1", "evil-2"} {
			m.Observe(rejected("api", k))
		}
		m.Observe(rejected("other", "c")) // a guard of its own: its own two keys
		got := collect(t, reader)
		rl := ptype("ratelimit")
		w := event(ratelimit.EventWaited)
		assertData(t, got, "resilience.events", counter(
			pt[int64](2, rl, pname("api"), w, key("a")),
			pt[int64](1, rl, pname("api"), w, key("b")),
			pt[int64](4, rl, pname("api"), w, key("_OTHER")),
			pt[int64](1, rl, pname("other"), w, key("c")),
		))
	})
	t.Run("off", func(t *testing.T) {
		m, reader := newMetrics(t)
		for _, k := range []string{"a", "b", "c"} {
			m.Observe(rejected("api", k))
		}
		got := collect(t, reader)
		assertData(t, got, "resilience.events", counter(
			pt[int64](3, ptype("ratelimit"), pname("api"), event(ratelimit.EventWaited)),
		))
	})
	t.Run("keyed breaker", func(t *testing.T) {
		// A breaker.Keyed of one key whose breakers trip on a failure: "a"
		// fails and opens, "b" evicts it, fails and opens, "c" evicts "b".
		// With WithKeys(1), "a" keeps its key and "b" reads "_OTHER".
		m, reader := newMetrics(t, resilienceotel.WithKeys(1))
		k := breaker.NewKeyed[string](breaker.WithName("hosts"), breaker.WithMaxKeys(1), breaker.WithThreshold(1), breaker.WithObserver(m))
		k.Breaker("a").Record(true)
		k.Breaker("b").Record(true)
		k.Breaker("c")
		got := collect(t, reader)
		br, h := ptype("breaker"), pname("hosts")
		var want []metricdata.DataPoint[int64]
		for _, v := range []string{"a", "_OTHER"} {
			want = append(want,
				pt[int64](1, br, h, event(breaker.EventFailure), key(v)),
				pt[int64](1, br, h, event(breaker.EventOpened), key(v)),
				pt[int64](1, br, h, event(breaker.EventEvicted), key(v)))
		}
		assertData(t, got, "resilience.events", counter(want...))
	})
}
