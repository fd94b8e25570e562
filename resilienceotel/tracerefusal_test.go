package resilienceotel_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/resilienceotel"
)

// refusing is a guard of one's own that refuses every call with a
// *resilience.RefusedError matching bulkhead.ErrFull, of name and hint.
func refusing(name string, hint time.Duration) resilience.Policy[string] {
	return resilience.New("refusing", func(context.Context, resilience.Next[string]) (string, error) {
		return "", resilience.Refuse(bulkhead.ErrFull, name, hint)
	})
}

// TestTraceRefusalHint: a resilience.refused event carries the guard's
// name as it gave it (U+FFFD for bytes that are not UTF-8) unless it is
// empty, and its hint in seconds when it gave one (0
// included): not when it cannot know (-1), nor for resilience.Never.
func TestTraceRefusalHint(t *testing.T) {
	for _, c := range []struct {
		name string
		hint time.Duration
		want map[string]any
	}{
		{"db", 2 * time.Second, map[string]any{"resilience.guard.name": "db", "resilience.retry_after": 2.0}},
		{"db", 0, map[string]any{"resilience.guard.name": "db", "resilience.retry_after": 0.0}},
		{"db", -1, map[string]any{"resilience.guard.name": "db"}},
		{"db", resilience.Never, map[string]any{"resilience.guard.name": "db"}},
		{"", time.Second, map[string]any{"resilience.retry_after": 1.0}},
		{"db eu:1/a", -1, map[string]any{"resilience.guard.name": "db eu:1/a"}},
		{"db\xff", -1, map[string]any{"resilience.guard.name": "db\uFFFD"}},
	} {
		tl := resilienceotel.Trace[string]("prices")
		p := resilience.Then(tl.Call, refusing(c.name, c.hint), tl.Attempt)
		events, _ := traced(t, func(ctx context.Context) {
			_, _ = p.Do(ctx, func(context.Context) (string, error) { return "ok", nil })
		})
		c.want["resilience.policy.name"] = "prices"
		c.want["error.type"] = "bulkhead.full"
		if diff := cmp.Diff([]spanEvent{{"resilience.refused", c.want}}, events); diff != "" {
			t.Errorf("guard %q, hint %v: span events mismatch (-want +got):\n%s", c.name, c.hint, diff)
		}
	}
}

// TestTraceServerAddressNeedsHost: an attempt's error whose *url.Error has
// no host (or a URL that does not parse) carries no server.address.
func TestTraceServerAddressNeedsHost(t *testing.T) {
	for _, u := range []string{"/v1/prices", "http://[::1"} {
		tl := resilienceotel.Trace[string]("prices")
		p := resilience.Then(tl.Call, tl.Attempt)
		down := &url.Error{Op: "Get", URL: u, Err: errors.New("down")}
		events, _ := traced(t, func(ctx context.Context) {
			_, _ = p.Do(ctx, func(context.Context) (string, error) { return "", down })
		})
		if len(events) != 1 {
			t.Fatalf("%q: events = %v, want one attempt", u, events)
		}
		if got, ok := events[0].Attrs["server.address"]; ok {
			t.Errorf("%q: server.address = %v, want none", u, got)
		}
		if got := events[0].Attrs["error.type"]; got != "*url.Error" {
			t.Errorf("%q: error.type = %v, want *url.Error", u, got)
		}
	}
}

// TestTraceNoFallbackWithoutAttempt: a call that a fallback answered
// before any attempt (a guard between them refused it) has no
// resilience.fallback event: no attempt failed.
func TestTraceNoFallbackWithoutAttempt(t *testing.T) {
	tl := resilienceotel.Trace[string]("prices")
	p := resilience.Then(tl.Call,
		resilience.Fallback(func(context.Context, error) (string, error) { return "cached", nil }),
		refusing("db", -1), tl.Attempt)
	events, attrs := traced(t, func(ctx context.Context) {
		if v, err := p.Do(ctx, func(context.Context) (string, error) { return "ok", nil }); v != "cached" || err != nil {
			t.Fatalf("Do = %q, %v; want cached, nil", v, err)
		}
	})
	if len(events) != 0 {
		t.Errorf("events = %v, want none", events)
	}
	if diff := cmp.Diff(map[string]any{"resilience.policy.name": "prices", "resilience.attempts": int64(0), "resilience.outcome": "success"}, attrs); diff != "" {
		t.Errorf("span attributes mismatch (-want +got):\n%s", diff)
	}
}
