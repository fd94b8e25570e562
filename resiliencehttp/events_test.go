package resiliencehttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/telemetry"
)

// events keeps the events it observes.
type events struct{ got []telemetry.Event }

func (e *events) Observe(ev telemetry.Event) { e.got = append(e.got, ev) }

// statusIs compares a *StatusError by its status only.
var statusIs = cmp.Comparer(func(a, b *resiliencehttp.StatusError) bool {
	return a == nil && b == nil || a != nil && b != nil && a.StatusCode == b.StatusCode
})

// Middleware reports its decision on each request: answered, failure (a
// 5xx, or a policy that skipped the handler) or refused, named after its
// policy.
func TestMiddlewareEvents(t *testing.T) {
	lim := ratelimit.New(resilience.Off, 2, ratelimit.WithName("api")) // two requests, then refusals
	p := ratelimit.Policy[struct{}](lim)
	var obs events
	code := http.StatusOK
	h := resiliencehttp.Middleware(p, resiliencehttp.WithObserver(&obs))(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
	}))
	get(t, h)
	code = http.StatusBadGateway
	get(t, h)
	if res := get(t, h); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("third request answered %d, want 429", res.StatusCode)
	}
	name := p.String()
	want := []telemetry.Event{
		{Type: resiliencehttp.EventAnswered, Name: name},
		{Type: resiliencehttp.EventFailure, Name: name, Err: &resiliencehttp.StatusError{StatusCode: http.StatusBadGateway}},
		{Type: resiliencehttp.EventRefused, Name: name, Err: ratelimit.ErrLimited},
	}
	if diff := cmp.Diff(want, obs.got, statusIs, errorsIs); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	for _, e := range obs.got {
		if e.Kind() != resiliencehttp.Kind {
			t.Errorf("event %s of kind %q, want %q", e.Type, e.Kind(), resiliencehttp.Kind)
		}
	}
}

// errorsIs compares errors with errors.Is (the got error matching the
// wanted one), other than *StatusError.
var errorsIs = cmp.FilterValues(func(a, b error) bool {
	var sa, sb *resiliencehttp.StatusError
	return !errors.As(a, &sa) && !errors.As(b, &sb)
}, cmp.Comparer(func(a, b error) bool { return errors.Is(a, b) || errors.Is(b, a) }))

// A request that the policy lets through without calling the handler (a
// fallback) is a failure, ErrNotServed.
func TestMiddlewareEventNotServed(t *testing.T) {
	skip := resilience.New("skip", func(context.Context, resilience.Next[struct{}]) (struct{}, error) { return struct{}{}, nil })
	var obs events
	h := resiliencehttp.Middleware(skip, resiliencehttp.WithObserver(&obs))(http.HandlerFunc(ok))
	if res := get(t, h); res.StatusCode != http.StatusInternalServerError {
		t.Fatalf("answered %d, want 500", res.StatusCode)
	}
	want := []telemetry.Event{{Type: resiliencehttp.EventFailure, Name: "skip", Err: resiliencehttp.ErrNotServed}}
	if diff := cmp.Diff(want, obs.got, cmpopts.EquateErrors()); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// Under WithKeyedLimit the events carry the request's key; a refusal by
// an inner Middleware is a refusal for the outer one too.
func TestMiddlewareEventsKeyedAndStacked(t *testing.T) {
	limits := ratelimit.NewKeyed[string](ratelimit.Every(time.Minute), 1)
	var inner, outer events
	byHeader := func(r *http.Request) string { return r.Header.Get("X-Client") }
	in := resiliencehttp.Middleware(resilience.Policy[struct{}]{}, resiliencehttp.WithKeyedLimit(byHeader, limits), resiliencehttp.WithObserver(&inner))
	out := resiliencehttp.Middleware(resilience.Policy[struct{}]{}, resiliencehttp.WithObserver(&outer))
	h := out(in(http.HandlerFunc(ok)))
	for range 2 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("X-Client", "alice")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	wantInner := []telemetry.Event{
		{Type: resiliencehttp.EventAnswered, Name: "identity", Key: "alice"},
		{Type: resiliencehttp.EventRefused, Name: "identity", Key: "alice", Err: ratelimit.ErrLimited},
	}
	if diff := cmp.Diff(wantInner, inner.got, errorsIs); diff != "" {
		t.Errorf("inner events mismatch (-want +got):\n%s", diff)
	}
	wantOuter := []telemetry.Event{
		{Type: resiliencehttp.EventAnswered, Name: "identity"},
		{Type: resiliencehttp.EventRefused, Name: "identity", Err: ratelimit.ErrLimited},
	}
	if diff := cmp.Diff(wantOuter, outer.got, errorsIs); diff != "" {
		t.Errorf("outer events mismatch (-want +got):\n%s", diff)
	}
}
