package resiliencehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

func get(t *testing.T, h http.Handler) *http.Response {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	// ServeHTTP runs on a goroutine of its own so that one that never
	// returns fails the test (a bound for failure only); a panic of it
	// goes on in the caller, as it would have.
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		h.ServeHTTP(w, r)
	}()
	if p := recv(t, done, "ServeHTTP to return"); p != nil {
		panic(p)
	}
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
	lim := ratelimit.New(resilience.Off, 1)
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

// codes sends each request to h and returns the status of each answer.
func codes(t *testing.T, h http.Handler, reqs ...*http.Request) []int {
	t.Helper()
	var got []int
	for _, r := range reqs {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	return got
}

// reqs returns n requests made by newReq.
func reqs(n int, newReq func(i int) *http.Request) []*http.Request {
	rs := make([]*http.Request, n)
	for i := range rs {
		rs[i] = newReq(i)
	}
	return rs
}

func TestMiddlewareBreakerOpensAfterHandler500s(t *testing.T) {
	fake := clock.NewFake()
	brk := breaker.New(breaker.WithThreshold(3), breaker.WithCooldown(time.Minute), breaker.WithClock(fake))
	calls := 0
	h := resiliencehttp.Middleware(breaker.Policy[struct{}](brk))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		http.Error(w, "database down", http.StatusInternalServerError)
	}))
	get := func(int) *http.Request { return httptest.NewRequest(http.MethodGet, "/", nil) }
	if diff := cmp.Diff([]int{500, 500, 500, 503, 503}, codes(t, h, reqs(5, get)...)); diff != "" {
		t.Errorf("answers mismatch (-want +got):\n%s", diff)
	}
	if calls != 3 {
		t.Errorf("handler ran %d times, want 3 (the breaker opens after 3 failures)", calls)
	}
	if s := brk.State(); s != breaker.Open {
		t.Errorf("breaker %v, want open", s)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, get(0))
	if got := w.Header().Get("Retry-After"); got != "60" {
		t.Errorf("open breaker's answer: Retry-After %q, want 60 (the cooldown)", got)
	}
}

func TestMiddlewareHandlerPanicIsAFailure(t *testing.T) {
	brk := breaker.New(breaker.WithThreshold(2), breaker.WithCooldown(time.Minute), breaker.WithClock(clock.NewFake()))
	h := resiliencehttp.Middleware(breaker.Policy[struct{}](brk))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("nil map")
	}))
	for i := range 2 {
		func() {
			defer func() {
				if r := recover(); r != "nil map" {
					t.Errorf("request %d: recovered %v, want the handler's own panic", i+1, r)
				}
			}()
			get(t, h)
		}()
	}
	if resp := get(t, h); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("after 2 panics: %d, want 503 (the breaker counted them and opened)", resp.StatusCode)
	}
}

func TestMiddlewareRecordsWhatTheHandlerDid(t *testing.T) {
	// A guard sees the handler's outcome as the op's error: nil for a
	// success, a *StatusError for a failure (5xx except 501).
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    int // status of the failure the guard sees; 0 for a success
	}{
		{"body only", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }, 0},
		{"nothing written", func(w http.ResponseWriter, r *http.Request) {}, 0},
		{"flush only", func(w http.ResponseWriter, r *http.Request) { w.(http.Flusher).Flush() }, 0},
		{"204", status(204), 0},
		{"404", status(404), 0},
		{"429", status(429), 0},
		{"500", status(500), 500},
		{"501", status(501), 0},
		{"502", status(502), 502},
		{"503", status(503), 503},
		{"599", status(599), 599},
		{"103 then 200", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(103); w.WriteHeader(200) }, 0},
		{"103 then 500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(103); w.WriteHeader(500) }, 500},
		{"200 then 500 (superfluous)", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200); w.WriteHeader(500) }, 0},
		{"body copied", func(w http.ResponseWriter, r *http.Request) { io.Copy(w, strings.NewReader("ok")) }, 0},
		// The status is the one the client got: the first written, or 200
		// by a body, a flush or a copy (through ReadFrom: the source has no
		// WriteTo) before any, whatever WriteHeader says after.
		{"body then 500 (superfluous)", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok"); w.WriteHeader(500) }, 0},
		{"flush then 500 (superfluous)", func(w http.ResponseWriter, r *http.Request) { w.(http.Flusher).Flush(); w.WriteHeader(500) }, 0},
		{"body read from then 500 (superfluous)", func(w http.ResponseWriter, r *http.Request) {
			w.(io.ReaderFrom).ReadFrom(io.LimitReader(strings.NewReader("ok"), 2))
			w.WriteHeader(500)
		}, 0},
		{"500 then body read from", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			w.(io.ReaderFrom).ReadFrom(io.LimitReader(strings.NewReader("ok"), 2))
		}, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen error
			spy := resilience.New("spy", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
				v, err := next.Call(ctx)
				seen = err
				return v, err
			})
			get(t, resiliencehttp.Middleware(spy)(tt.handler))
			var se *resiliencehttp.StatusError
			switch {
			case tt.want == 0 && seen != nil:
				t.Errorf("guard saw %v, want a success", seen)
			case tt.want != 0 && (!errors.As(seen, &se) || se.StatusCode != tt.want):
				t.Errorf("guard saw %v, want a *StatusError of %d", seen, tt.want)
			}
		})
	}
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) }
}

func TestMiddlewareResponseWriterKeepsTheServersMethods(t *testing.T) {
	// Over a real HTTP/1.1 connection the server's ResponseWriter can
	// flush, hijack and set deadlines; the handler's must too. In a
	// recorder, which cannot hijack, the handler's must not claim to.
	type caps struct{ Flusher, Hijacker, ReaderFrom, Deadline bool }
	probe := func(w http.ResponseWriter) caps {
		_, f := w.(http.Flusher)
		_, h := w.(http.Hijacker)
		_, rf := w.(io.ReaderFrom)
		return caps{f, h, rf, http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute)) == nil}
	}
	got := make(chan caps, 2)
	h := resiliencehttp.Middleware(resilience.Policy[struct{}]{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- probe(w)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := srv.Client()
	c.Timeout = wait
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if diff := cmp.Diff(caps{true, true, true, true}, recv(t, got, "handler never ran")); diff != "" {
		t.Errorf("over HTTP/1.1, the handler's ResponseWriter mismatch (-want +got):\n%s", diff)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	if diff := cmp.Diff(caps{true, false, true, false}, recv(t, got, "handler never ran")); diff != "" {
		t.Errorf("in a ResponseRecorder, the handler's ResponseWriter mismatch (-want +got):\n%s", diff)
	}
}

func TestMiddlewareHijackedConnectionIsASuccess(t *testing.T) {
	seen := make(chan error, 1)
	spy := resilience.New("spy", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
		v, err := next.Call(ctx)
		seen <- err
		return v, err
	})
	srv := httptest.NewServer(resiliencehttp.Middleware(spy)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		buf.WriteString("HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		buf.Flush()
		conn.Close()
	})))
	defer srv.Close()
	c := srv.Client()
	c.Timeout = wait
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := recv(t, seen, "the guard never saw the hijacking handler return"); err != nil {
		t.Errorf("guard saw %v for a hijacked connection, want a success (what goes over it is not the Middleware's to judge)", err)
	}
}

// keyed sends one GET per key to h, the key in the X-Key header ("" for
// no header), and returns each answer's status and Retry-After.
func keyed(h http.Handler, keys ...string) []string {
	var got []string
	for _, k := range keys {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if k != "" {
			r.Header.Set("X-Key", k)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		a := fmt.Sprint(w.Code)
		if ra := w.Header().Get("Retry-After"); ra != "" {
			a += " after " + ra
		}
		got = append(got, a)
	}
	return got
}

func byHeader(r *http.Request) string { return r.Header.Get("X-Key") }

func ok(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }

func TestMiddlewareKeyedLimitAnswers429PerKey(t *testing.T) {
	fake := clock.NewFake()
	limits := ratelimit.NewKeyed[string](ratelimit.Every(10*time.Second), 1, ratelimit.WithClock(fake))
	h := resiliencehttp.Middleware(resilience.Policy[struct{}]{}, resiliencehttp.WithKeyedLimit(byHeader, limits))(http.HandlerFunc(ok))
	var got []string
	got = append(got, keyed(h, "alice")...)
	fake.Advance(2500 * time.Millisecond)
	got = append(got, keyed(h, "alice", "bob")...)
	fake.Advance(2500 * time.Millisecond)
	got = append(got, keyed(h, "alice", "bob")...)
	fake.Advance(5 * time.Second)
	got = append(got, keyed(h, "alice", "bob")...)
	want := []string{
		"200",
		"429 after 8", "200", // alice waits out her own bucket (7.5 s left); bob has his own
		"429 after 5", "429 after 8",
		"200", "429 after 3",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers mismatch (-want +got):\n%s", diff)
	}
}

func TestMiddlewareKeyedLimitEmptyKeysShareOneBucket(t *testing.T) {
	// A request cannot escape the limit by sending no key: all requests
	// without one share the bucket of the empty key, and do not touch the
	// buckets of requests with keys.
	limits := ratelimit.NewKeyed[string](ratelimit.Every(time.Minute), 2, ratelimit.WithClock(clock.NewFake()))
	served := 0
	h := resiliencehttp.Middleware(resilience.Policy[struct{}]{}, resiliencehttp.WithKeyedLimit(byHeader, limits))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served++
	}))
	got := keyed(h, "", "", "", "alice", "", "alice")
	want := []string{"200", "200", "429 after 60", "200", "429 after 60", "200"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers mismatch (-want +got):\n%s", diff)
	}
	if served != 4 {
		t.Errorf("handler served %d requests, want 4", served)
	}
	if n := limits.Len(); n != 2 {
		t.Errorf("%d keys tracked, want 2 (the empty key and alice)", n)
	}
}

func TestMiddlewareKeyedLimitKeyChurnPastMaxKeys(t *testing.T) {
	// A client that makes new keys cannot grow the tracked set past
	// MaxKeys; the price (ratelimit.Keyed's documented caveat) is that a
	// key pushed out comes back with a full bucket.
	limits := ratelimit.NewKeyed[string](ratelimit.Every(time.Minute), 1, ratelimit.WithMaxKeys(3), ratelimit.WithClock(clock.NewFake()))
	h := resiliencehttp.Middleware(resilience.Policy[struct{}]{}, resiliencehttp.WithKeyedLimit(byHeader, limits))(http.HandlerFunc(ok))
	if diff := cmp.Diff([]string{"200", "429 after 60"}, keyed(h, "victim", "victim")); diff != "" {
		t.Errorf("victim's answers mismatch (-want +got):\n%s", diff)
	}
	for i := range 1000 {
		if got := keyed(h, fmt.Sprintf("churn-%d", i)); got[0] != "200" {
			t.Fatalf("new key %d: %s, want 200 (a fresh bucket)", i, got[0])
		}
		if n := limits.Len(); n > 3 {
			t.Fatalf("after %d new keys: %d keys tracked, want at most MaxKeys 3", i+1, n)
		}
	}
	if diff := cmp.Diff([]string{"200", "429 after 60"}, keyed(h, "victim", "victim")); diff != "" {
		t.Errorf("victim's answers after the churn mismatch (-want +got):\n%s", diff)
	}
}

func TestMiddlewareKeyedLimitLongKeys(t *testing.T) {
	// Long keys are tracked by their digest: a key is still limited as
	// itself, and two long keys that differ only at the end are two keys.
	limits := ratelimit.NewKeyed[string](ratelimit.Every(time.Minute), 1, ratelimit.WithClock(clock.NewFake()))
	h := resiliencehttp.Middleware(resilience.Policy[struct{}]{}, resiliencehttp.WithKeyedLimit(byHeader, limits))(http.HandlerFunc(ok))
	long := strings.Repeat("k", 100_000)
	got := keyed(h, long+"1", long+"1", long+"2", long[:64], long[:64], long[:65])
	want := []string{"200", "429 after 60", "200", "200", "429 after 60", "200"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers mismatch (-want +got):\n%s", diff)
	}
}

func TestMiddlewareKeyedLimitRefusesBeforeTheGuards(t *testing.T) {
	// A request refused by its key's limit takes no bulkhead slot and is
	// not counted by a breaker: it never reaches p.
	limits := ratelimit.NewKeyed[string](ratelimit.Every(time.Minute), 1, ratelimit.WithClock(clock.NewFake()))
	reached := 0
	spy := resilience.New("spy", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
		reached++
		return next.Call(ctx)
	})
	h := resiliencehttp.Middleware(spy, resiliencehttp.WithKeyedLimit(byHeader, limits))(http.HandlerFunc(ok))
	keyed(h, "a", "a", "a", "b")
	if reached != 2 {
		t.Errorf("p saw %d requests, want 2 (a's first and b's)", reached)
	}
}

func TestMiddlewareOptionsPanic(t *testing.T) {
	limits := ratelimit.NewKeyed[string](1, 1)
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"nil option", func() { resiliencehttp.Middleware(resilience.Policy[struct{}]{}, nil) }, "resiliencehttp: Middleware option must not be nil"},
		{"nil key", func() { resiliencehttp.WithKeyedLimit(nil, limits) }, "resiliencehttp: WithKeyedLimit key function must not be nil"},
		{"nil limits", func() { resiliencehttp.WithKeyedLimit(byHeader, nil) }, "resiliencehttp: WithKeyedLimit limits must not be nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if got := recover(); got != tt.want {
					t.Errorf("panic %v, want %q", got, tt.want)
				}
			}()
			tt.f()
		})
	}
}

func TestMiddlewareKeyedLimitLongKeysHoldLittleMemory(t *testing.T) {
	// 32 tracked keys of 1 MB each, as a client could send in a header:
	// tracked as they are, they would hold 32 MB.
	limits := ratelimit.NewKeyed[string](1, 1, ratelimit.WithMaxKeys(32))
	h := resiliencehttp.Middleware(resilience.Policy[struct{}]{}, resiliencehttp.WithKeyedLimit(byHeader, limits))(http.HandlerFunc(ok))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 32 {
		keyed(h, fmt.Sprintf("%d:%s", i, strings.Repeat("k", 1<<20)))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if n := limits.Len(); n != 32 {
		t.Fatalf("%d keys tracked, want 32", n)
	}
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 4<<20 {
		t.Errorf("the heap grew by %d MB for 32 tracked keys of 1 MB, want well under 4 MB (long keys kept whole?)", grown>>20)
	}
	runtime.KeepAlive(limits)
}

func TestMiddlewareAllocations(t *testing.T) {
	// A request through Middleware allocates its own state (one record,
	// and the op bound to it) and nothing for the handler's answer.
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := httptest.NewRecorder()
	h := resiliencehttp.Middleware(resilience.Policy[struct{}]{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest) // not a failure: nothing to allocate
	}))
	if n := testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }); n > 2 {
		t.Errorf("a request through Middleware allocates %v times, want at most 2", n)
	}
}

func BenchmarkMiddleware(b *testing.B) {
	nop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for name, h := range map[string]http.Handler{
		"plain": resiliencehttp.Middleware(resilience.Policy[struct{}]{})(nop),
		"keyed": resiliencehttp.Middleware(resilience.Policy[struct{}]{},
			resiliencehttp.WithKeyedLimit(byHeader, ratelimit.NewKeyed[string](1e9, 1<<30)))(nop),
	} {
		b.Run(name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("X-Key", "client-1")
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}

// spyErrs is a layer that sends the error of each call of the rest of the
// chain to errs (buffered, so that the layer never blocks on it).
func spyErrs(errs chan<- error) resilience.Policy[struct{}] {
	return resilience.New("spy", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
		v, err := next.Call(ctx)
		errs <- err
		return v, err
	})
}

// isRefusedAndPermanent reports whether err is the error of an op that
// Middleware did not run: a refusal (a breaker does not count it) that no
// retry retries.
func isRefusedAndPermanent(err error) bool {
	return errors.Is(err, resilience.ErrRefused) && resilience.IsPermanent(err)
}

func TestMiddlewareRetryRunsTheHandlerOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The handler answers once, on one ResponseWriter: a retry's
		// second call of the op is refused, marked permanent so that the
		// retry stops, and a refusal so that the breaker under the retry
		// counts the handler's one failure only.
		brk := breaker.New(breaker.WithThreshold(2), breaker.WithCooldown(time.Minute))
		errs := make(chan error, 3)
		calls := 0
		h := resiliencehttp.Middleware(resilience.Then(
			retry.New[struct{}](retry.WithAttempts(3)),
			spyErrs(errs),
			breaker.Policy[struct{}](brk),
		))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls++
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, "fail;")
		}))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		if calls != 1 || w.Code != 500 || w.Body.String() != "fail;" {
			t.Errorf("handler ran %d times; answer %d %q, want once, 500 %q", calls, w.Code, w.Body, "fail;")
		}
		close(errs)
		var seen []error
		for err := range errs {
			seen = append(seen, err)
		}
		var se *resiliencehttp.StatusError
		if len(seen) != 2 || !errors.As(seen[0], &se) || se.StatusCode != 500 || !isRefusedAndPermanent(seen[1]) {
			t.Errorf("the op's calls returned %v, want the handler's 500 and then a permanent refusal", seen)
		}
		if s, n := brk.State(), brk.Counts().Failures; s != breaker.Closed || n != 1 {
			t.Errorf("breaker %v with %d failures, want closed with 1 (the handler's)", s, n)
		}
	})
}

func TestMiddlewareHedgeRunsTheHandlerOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A hedge's second attempt, started while the handler runs, is
		// refused at once without running the handler a second time on
		// the same ResponseWriter.
		errs := make(chan error, 2)
		release := make(chan struct{})
		var calls atomic.Int64
		h := resiliencehttp.Middleware(resilience.Then(
			hedge.New[struct{}](time.Second),
			spyErrs(errs),
		))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				<-release
			}
			fmt.Fprint(w, "x;")
		}))
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		}()
		time.Sleep(2 * time.Second) // the hedge's delay passes
		synctest.Wait()
		if err := <-errs; !isRefusedAndPermanent(err) {
			t.Errorf("the hedge's second attempt returned %v, want a permanent refusal", err)
		}
		close(release)
		<-done
		if n := calls.Load(); n != 1 || w.Body.String() != "x;" {
			t.Errorf("handler ran %d times, answer %q; want once, %q", n, w.Body, "x;")
		}
	})
}

func TestMiddlewareWaitsForAnAbandonedHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A timeout that abandons its op returns while the handler runs;
		// ServeHTTP must not: net/http finishes the response when it
		// returns, and the handler still writes to it.
		release, returned := make(chan struct{}), make(chan struct{})
		h := resiliencehttp.Middleware(timeout.New[struct{}](time.Second, timeout.WithAbandon(true)))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(returned)
			<-release
			fmt.Fprint(w, "late")
		}))
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		}()
		time.Sleep(2 * time.Second) // the timeout expires
		synctest.Wait()
		select {
		case <-done:
			t.Error("ServeHTTP returned while the handler still runs")
		default:
		}
		close(release)
		<-done
		<-returned
		if w.Code != 200 || w.Body.String() != "late" {
			t.Errorf("answer %d %q, want the handler's 200 %q", w.Code, w.Body, "late")
		}
	})
}

func TestMiddlewarePolicyThatSkipsTheHandlerIsAServerError(t *testing.T) {
	// A fallback that turns the open breaker's refusal into a success
	// leaves the request unanswered: the client must not get an empty 200.
	brk := breaker.New()
	brk.ForceOpen()
	calls := 0
	h := resiliencehttp.Middleware(resilience.Then(
		resilience.Fallback(func(ctx context.Context, err error) (struct{}, error) { return struct{}{}, nil }),
		breaker.Policy[struct{}](brk),
	))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		fmt.Fprint(w, "ok")
	}))
	resp := get(t, h)
	body, _ := io.ReadAll(resp.Body)
	want := "resiliencehttp: the Middleware's policy returned without calling the handler (a fallback cannot answer an HTTP request)\n"
	if resp.StatusCode != http.StatusInternalServerError || string(body) != want || calls != 0 {
		t.Errorf("answer %d %q, handler ran %d times; want 500 %q, never", resp.StatusCode, body, calls, want)
	}
}

func TestMiddlewareOpCalledAfterServeHTTPReturnedIsRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A policy that gives up before its op has started (as a timeout
		// WithAbandon may) gets its refusal answered; the op, started
		// later, must not run the handler on a finished response.
		start := make(chan struct{})
		errs := make(chan error, 1)
		late := resilience.New("late", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
			go func() {
				<-start
				_, err := next.Call(ctx)
				errs <- err
			}()
			return struct{}{}, resilience.Refuse(bulkhead.ErrFull, "late", -1)
		})
		calls := 0
		h := resiliencehttp.Middleware(late)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls++ }))
		if resp := get(t, h); resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("answer %d, want 503 (the refusal)", resp.StatusCode)
		}
		close(start)
		if err := <-errs; !isRefusedAndPermanent(err) || calls != 0 {
			t.Errorf("the late op returned %v and ran the handler %d times, want a permanent refusal and never", err, calls)
		}
	})
}

func TestMiddlewareWaitsForTheHandlerWhenThePolicyPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A policy that runs its op in another goroutine and then panics:
		// the panic goes on to net/http, but only once the handler is done
		// with the ResponseWriter.
		started, release, returned := make(chan struct{}), make(chan struct{}), make(chan struct{})
		crash := resilience.New("crash", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
			go next.Call(ctx)
			<-started
			panic("policy bug")
		})
		h := resiliencehttp.Middleware(crash)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer close(returned)
			close(started)
			<-release
			fmt.Fprint(w, "late")
		}))
		done := make(chan any)
		go func() {
			defer func() { done <- recover() }()
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		}()
		synctest.Wait()
		select {
		case <-done:
			t.Error("ServeHTTP panicked on while the handler still runs")
			close(release)
		default:
			close(release)
			if r := <-done; r != "policy bug" {
				t.Errorf("recovered %v, want the policy's panic", r)
			}
		}
		<-returned
	})
}

// unwrapping is a middleware of someone else's that wraps the
// ResponseWriter, and unwraps to it for http.ResponseController.
func unwrapping(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(wrappedWriter{w}, r)
	})
}

type wrappedWriter struct{ http.ResponseWriter }

func (w wrappedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func TestStackedMiddlewaresPassRefusalsOut(t *testing.T) {
	// An inner Middleware's refusal reaches the outer Middleware's guards
	// as the refusal it is, not as a handler's 503: an outer breaker does
	// not count it, and the client gets the inner Middleware's answer.
	full := func() *bulkhead.Bulkhead {
		bh := bulkhead.New(1)
		bh.TryAcquire()
		return bh
	}
	open := func() *breaker.Breaker {
		brk := breaker.New()
		brk.ForceOpen()
		return brk
	}
	emptied := func() *ratelimit.Keyed[string] {
		limits := ratelimit.NewKeyed[string](ratelimit.Every(time.Minute), 1, ratelimit.WithClock(clock.NewFake()))
		limits.Allow("")
		return limits
	}
	tests := []struct {
		name   string
		outer  resilience.Policy[struct{}] // under the spy
		inner  func(http.Handler) http.Handler
		wrap   bool   // another middleware's ResponseWriter between the two
		answer string // status and Retry-After (a forced-open breaker gives no hint)
		reason error
	}{
		{"breaker outside, full bulkhead inside", breaker.Policy[struct{}](breaker.New(breaker.WithThreshold(1))),
			resiliencehttp.Middleware(bulkhead.Policy[struct{}](full())), false, "503 after 1", bulkhead.ErrFull},
		{"bulkhead outside, open breaker inside", bulkhead.Policy[struct{}](bulkhead.New(1)),
			resiliencehttp.Middleware(breaker.Policy[struct{}](open())), false, "503", breaker.ErrForcedOpen},
		{"breaker outside, open breaker inside, through another ResponseWriter", breaker.Policy[struct{}](breaker.New(breaker.WithThreshold(1))),
			resiliencehttp.Middleware(breaker.Policy[struct{}](open())), true, "503", breaker.ErrForcedOpen},
		{"breaker outside, breaker in the middle, full bulkhead inside", breaker.Policy[struct{}](breaker.New(breaker.WithThreshold(1))),
			func(h http.Handler) http.Handler {
				middle := resiliencehttp.Middleware(breaker.Policy[struct{}](breaker.New(breaker.WithThreshold(1))))
				return middle(unwrapping(resiliencehttp.Middleware(bulkhead.Policy[struct{}](full()))(h)))
			}, false, "503 after 1", bulkhead.ErrFull},
		{"breaker outside, keyed limit inside", breaker.Policy[struct{}](breaker.New(breaker.WithThreshold(1))),
			resiliencehttp.Middleware(resilience.Policy[struct{}]{}, resiliencehttp.WithKeyedLimit(byHeader, emptied())), true, "429 after 60", ratelimit.ErrLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := make(chan error, 3)
			served := 0
			var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ })
			h = tt.inner(h)
			if tt.wrap {
				h = unwrapping(h)
			}
			h = resiliencehttp.Middleware(resilience.Then(spyErrs(errs), tt.outer))(h)
			if diff := cmp.Diff([]string{tt.answer, tt.answer, tt.answer}, keyed(h, "", "", "")); diff != "" {
				t.Errorf("answers mismatch (-want +got):\n%s", diff)
			}
			if served != 0 {
				t.Errorf("handler ran %d times, want never", served)
			}
			for i := range 3 {
				if err := <-errs; !errors.Is(err, tt.reason) || !errors.Is(err, resilience.ErrRefused) {
					t.Errorf("request %d: the outer guards saw %v, want the inner refusal (%v)", i+1, err, tt.reason)
				}
			}
		})
	}
}
