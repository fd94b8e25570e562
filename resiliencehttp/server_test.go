package resiliencehttp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

func get(t *testing.T, h http.Handler) *http.Response {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	return w.Result()
}

func TestMiddlewareRateLimitAnswers429WithRetryAfter(t *testing.T) {
	fake := clock.NewFake()
	lim := ratelimit.New(ratelimit.Every(10*time.Second), 1, ratelimit.WithClock(fake))
	served := 0
	h := resiliencehttp.Middleware(ratelimit.Policy[struct{}](lim))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served++
		fmt.Fprint(w, "hello")
	}))

	if resp := get(t, h); resp.StatusCode != 200 {
		t.Fatalf("first request: %d, want 200", resp.StatusCode)
	}
	fake.Advance(2500 * time.Millisecond)
	resp := get(t, h)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "8" {
		t.Errorf("second request: %d Retry-After %q, want 429 and 8 (7.5s rounded up)", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if served != 1 {
		t.Errorf("handler served %d requests, want 1", served)
	}
	fake.Advance(7500 * time.Millisecond)
	if resp := get(t, h); resp.StatusCode != 200 {
		t.Errorf("after the wait: %d, want 200", resp.StatusCode)
	}
}

func TestMiddlewareFullBulkheadAnswers503(t *testing.T) {
	bh := bulkhead.New(1)
	inside, release := make(chan struct{}), make(chan struct{})
	h := resiliencehttp.Middleware(bulkhead.Policy[struct{}](bh))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			close(inside)
			select {
			case <-release:
			case <-time.After(wait):
			}
		}
		fmt.Fprint(w, "ok")
	}))
	done := make(chan int)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/slow", nil))
		done <- w.Code
	}()
	recv(t, inside, "the slow request never reached the handler")
	resp := get(t, h)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("while full: %d Retry-After %q (%s), want 503 and 1", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	close(release)
	if code := recv(t, done, "the slow request never finished"); code != 200 {
		t.Errorf("the slow request: %d, want 200", code)
	}
	if resp := get(t, h); resp.StatusCode != 200 {
		t.Errorf("after release: %d, want 200 (slot lost?)", resp.StatusCode)
	}
	if n := bh.InFlight(); n != 0 {
		t.Errorf("InFlight = %d after all requests, want 0", n)
	}
}

func TestMiddlewareHandlerPanicReleasesTheSlot(t *testing.T) {
	bh := bulkhead.New(1)
	h := resiliencehttp.Middleware(bulkhead.Policy[struct{}](bh))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	func() {
		defer func() {
			if r := recover(); r != http.ErrAbortHandler {
				t.Errorf("recovered %v, want the handler's own panic", r)
			}
		}()
		get(t, h)
	}()
	if n := bh.InFlight(); n != 0 {
		t.Errorf("InFlight = %d after a panicking handler, want 0", n)
	}
}

func TestMiddlewareHandlerSeesTheGuardsContext(t *testing.T) {
	type key struct{}
	tag := resilience.New("tag", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
		return next.Call(context.WithValue(ctx, key{}, "tagged"))
	})
	var seen any
	h := resiliencehttp.Middleware(tag)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r.Context().Value(key{})
	}))
	get(t, h)
	if seen != "tagged" {
		t.Errorf("handler saw context value %v, want tagged", seen)
	}
}

func TestMiddlewareOmitsRetryAfterWhenTheHintIsNever(t *testing.T) {
	// A limiter of rate 0 never refills: its refusal's hint is the largest
	// time.Duration, "never", which no Retry-After can say.
	lim := ratelimit.New(0, 1)
	h := resiliencehttp.Middleware(ratelimit.Policy[struct{}](lim))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	if resp := get(t, h); resp.StatusCode != 200 {
		t.Fatalf("first request: %d, want 200", resp.StatusCode)
	}
	resp := get(t, h)
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("second request: %d, want 429", resp.StatusCode)
	}
	if v := resp.Header.Values("Retry-After"); len(v) != 0 {
		t.Errorf("Retry-After %q, want none for a hint of never", v)
	}
}
