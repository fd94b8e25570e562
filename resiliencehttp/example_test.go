package resiliencehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

func ExampleTransport() {
	// A server that fails its first two requests.
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()

	client := &http.Client{Transport: &resiliencehttp.Transport{
		Policy: resilience.Then(
			retry.New[*http.Response](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(time.Millisecond))),
			timeout.New[*http.Response](2*time.Second), // each attempt, up to its headers
		),
	}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, string(body), "after", calls.Load(), "attempts")
	// Output: 200 hello after 3 attempts
}

// A Bulkhead on the Transport bounds whole exchanges, bodies included: here
// at most 2 of 6 concurrent requests are at the server at any time, though
// each body streams in pieces after its headers.
func ExampleTransport_bulkhead() {
	var active, peak atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := active.Add(1)
		defer active.Add(-1)
		for p := peak.Load(); a > p && !peak.CompareAndSwap(p, a); p = peak.Load() {
		}
		for range 3 {
			fmt.Fprint(w, "chunk ")
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()

	client := &http.Client{
		Transport: &resiliencehttp.Transport{
			Policy:   retry.New[*http.Response](retry.WithAttempts(3)),
			Bulkhead: bulkhead.New(2, bulkhead.WithMaxQueue(10)), // 2 exchanges at once; others wait
		},
		Timeout: 10 * time.Second, // bounds each whole exchange, body included
	}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			resp, err := client.Get(srv.URL)
			if err != nil {
				fmt.Println(err)
				return
			}
			defer resp.Body.Close() // gives the slot back (so does reading to EOF)
			io.Copy(io.Discard, resp.Body)
		})
	}
	wg.Wait()
	if n := peak.Load(); n <= 2 {
		fmt.Println("never more than 2 exchanges at the server")
	} else {
		fmt.Println(n, "exchanges at the server at once")
	}
	// Output: never more than 2 exchanges at the server
}

func ExampleMiddleware() {
	limiter := ratelimit.New(1, 1) // 1 request per second, burst 1
	slots := bulkhead.New(10)      // at most 10 requests at once
	guard := resiliencehttp.Middleware(resilience.Then(
		ratelimit.Policy[struct{}](limiter),
		bulkhead.Policy[struct{}](slots),
	))
	h := guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))

	for range 2 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		fmt.Printf("%d Retry-After=%q\n", w.Code, w.Header().Get("Retry-After"))
	}
	// Output:
	// 200 Retry-After=""
	// 429 Retry-After="1"
}

// A breaker in Middleware learns from the handler: a 5xx answer (other than
// 501) or a panic is a failure, and once the breaker opens the Middleware
// answers 503 itself, with the cooldown left as Retry-After, and spares the
// handler.
func ExampleMiddleware_breaker() {
	brk := breaker.New(breaker.WithThreshold(2), breaker.WithCooldown(30*time.Second), breaker.WithClock(clock.NewFake()))
	h := resiliencehttp.Middleware(breaker.Policy[struct{}](brk))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "database down", http.StatusInternalServerError)
	}))
	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		fmt.Printf("%d Retry-After=%q\n", w.Code, w.Header().Get("Retry-After"))
	}
	// Output:
	// 500 Retry-After=""
	// 500 Retry-After=""
	// 503 Retry-After="30"
}

// Each client host gets its own bucket: here 2 requests, then 1 a minute.
// The key is the host of RemoteAddr without its port, which changes with
// every connection.
func ExampleWithKeyedLimit() {
	limits := ratelimit.NewKeyed[string](ratelimit.Every(time.Minute), 2,
		ratelimit.WithMaxKeys(10_000), ratelimit.WithClock(clock.NewFake()))
	clientHost := func(r *http.Request) string {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			return r.RemoteAddr
		}
		return host
	}
	mw := resiliencehttp.Middleware(resilience.Policy[struct{}]{}, resiliencehttp.WithKeyedLimit(clientHost, limits))
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))

	for _, addr := range []string{"192.0.2.1:1001", "192.0.2.1:1002", "192.0.2.1:1003", "198.51.100.7:2001"} {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Printf("%s %d Retry-After=%q\n", addr, w.Code, w.Header().Get("Retry-After"))
	}
	// Output:
	// 192.0.2.1:1001 200 Retry-After=""
	// 192.0.2.1:1002 200 Retry-After=""
	// 192.0.2.1:1003 429 Retry-After="60"
	// 198.51.100.7:2001 200 Retry-After=""
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	fmt.Println(resiliencehttp.ParseRetryAfter("120", now))
	fmt.Println(resiliencehttp.ParseRetryAfter("Sun, 29 Nov 2026 12:00:30 GMT", now))
	fmt.Println(resiliencehttp.ParseRetryAfter("soon", now))
	// Output:
	// 2m0s true
	// 30s true
	// 0s false
}

func ExampleIsFailure() {
	for _, code := range []int{200, 404, 429, 500, 501, 503} {
		fmt.Println(code, resiliencehttp.IsFailure(&http.Response{StatusCode: code}))
	}
	// Output:
	// 200 false
	// 404 false
	// 429 true
	// 500 true
	// 501 false
	// 503 true
}

func ExampleTransport_RoundTrip() {
	// A dependency that is down for good.
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "upstream down", http.StatusBadGateway)
	}))
	defer srv.Close()

	tr := &resiliencehttp.Transport{Policy: retry.New[*http.Response](
		retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(time.Millisecond)),
	)}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The retry gave up: the caller gets the last response, body intact.
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.TrimSpace(string(body)), "after", calls.Load(), "attempts")
	// Output: 502 upstream down after 2 attempts
}

func ExampleStatusError() {
	// A dependency that is overloaded.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()

	// The caller gives up while the retry is about to wait: RoundTrip
	// returns no response, and its error holds the last attempt's
	// StatusError.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := &http.Client{Transport: &resiliencehttp.Transport{Policy: retry.New[*http.Response](
		retry.WithOnRetry(func(int, error, time.Duration) { cancel() }),
	)}}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	_, err := client.Do(req)
	var se *resiliencehttp.StatusError
	if errors.As(err, &se) {
		fmt.Println(se.StatusCode, se.RetryAfter())
	}
	// Output: 503 3s
}

func ExampleStatusError_Error() {
	fmt.Println(&resiliencehttp.StatusError{StatusCode: 503, Status: "503 Service Unavailable", After: 2 * time.Second})
	fmt.Println(&resiliencehttp.StatusError{StatusCode: 429})
	// Output:
	// resiliencehttp: 503 Service Unavailable (retry after 2s)
	// resiliencehttp: 429 Too Many Requests
}

func ExampleStatusError_RetryAfter() {
	// Inside the policies, a failing response is a *StatusError; its
	// RetryAfter is the Retry-After header, which a retry honours: it finds
	// it with resilience.RetryAfter, through any wrapping.
	err := fmt.Errorf("payments: %w", &resiliencehttp.StatusError{StatusCode: 503, After: 5 * time.Second})
	fmt.Println(resilience.RetryAfter(err))
	// Without a Retry-After header there is no hint (RetryAfter() < 0), so
	// the error never shadows another hint beside it.
	fmt.Println(resilience.RetryAfter(&resiliencehttp.StatusError{StatusCode: 500}))
	// Output:
	// 5s true
	// 0s false
}

// resetNetwork is a RoundTripper whose every connection is reset.
type resetNetwork struct{}

func (resetNetwork) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	return nil, errors.New("connection reset by peer")
}

func ExampleErrBodyNotReplayable() {
	// A hedge sends another attempt as soon as one fails. A streamed body
	// has no GetBody: it cannot be sent twice, so the second attempt is
	// refused with ErrBodyNotReplayable.
	tr := &resiliencehttp.Transport{
		Base:   resetNetwork{},
		Policy: hedge.New[*http.Response](time.Second),
	}
	req, _ := http.NewRequest(http.MethodPost, "http://payments.internal/events", io.NopCloser(strings.NewReader("event")))
	_, err := tr.RoundTrip(req)
	fmt.Println(errors.Is(err, resiliencehttp.ErrBodyNotReplayable))
	fmt.Println(err)
	// Output:
	// true
	// hedge: all 2 attempts failed: connection reset by peer; resiliencehttp: request body cannot be replayed (no GetBody)
}

func ExampleErrBodyNotReplayable_retry() {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()

	// A retry stops at the first failure of a request whose body cannot be
	// replayed: it is sent once however many attempts the retry allows, and
	// the caller gets its response.
	req, _ := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("event")))
	tr := &resiliencehttp.Transport{Policy: retry.New[*http.Response](retry.WithAttempts(5))}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, "after", calls.Load(), "attempt")
	// Output: 503 after 1 attempt
}

// The client's CloseIdleConnections reaches the base transport, so idle
// connections (and their goroutines) go when the client is done.
func ExampleTransport_CloseIdleConnections() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	base := &http.Transport{}
	client := &http.Client{Transport: &resiliencehttp.Transport{Base: base, Policy: retry.New[*http.Response]()}}
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	client.CloseIdleConnections() // closes base's idle connection
	fmt.Println(resp.Status)
	// Output: 200 OK
}

// HostBreaker gives each host its own breaker: a host that keeps failing
// is cut off, the others are still called.
func ExampleHostBreaker() {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer up.Close()

	hosts := breaker.NewKeyed[string](breaker.WithName("upstream"), breaker.WithThreshold(2), breaker.WithMaxKeys(1024))
	client := &http.Client{Transport: &resiliencehttp.Transport{Policy: resiliencehttp.HostBreaker(hosts)}}
	for _, url := range []string{down.URL, down.URL, down.URL, up.URL} {
		resp, err := client.Get(url)
		if err != nil {
			fmt.Println(errors.Is(err, breaker.ErrOpen), "refused without a request")
			continue
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode)
	}
	for host, b := range hosts.All() {
		fmt.Println(host == strings.TrimPrefix(down.URL, "http://"), b.State())
	}
	// Output:
	// 503
	// 503
	// true refused without a request
	// 200
	// true open
	// false closed
}

// Request gives the layers of Transport.Policy the request being sent:
// here a layer that keys a rate limit by the request's path.
func ExampleRequest() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	perPath := ratelimit.NewKeyed[string](resilience.Off, 1) // one request per path, never refilled
	limit := resilience.New("per-path", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
		if !perPath.Allow(resiliencehttp.Request(ctx).URL.Path) {
			return nil, errors.New("per-path limit")
		}
		return next.Call(ctx)
	})
	client := &http.Client{Transport: &resiliencehttp.Transport{Policy: limit}}
	for _, path := range []string{"/a", "/b", "/a"} {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			fmt.Println(path, "limited")
			continue
		}
		resp.Body.Close()
		fmt.Println(path, resp.StatusCode)
	}
	// Output:
	// /a 200
	// /b 200
	// /a limited
}

// RequestHost is the key HostBreaker uses: the request URL's host, in
// lower case, without the scheme's default port.
func ExampleRequestHost() {
	var host string
	spy := resilience.New("spy", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
		host = resiliencehttp.RequestHost(ctx)
		return nil, errors.New("not sent")
	})
	client := &http.Client{Transport: &resiliencehttp.Transport{Policy: spy}}
	for _, u := range []string{"http://api.example:8443/v1/items", "https://API.example:443/v1/items"} {
		_, _ = client.Get(u)
		fmt.Println(host)
	}
	// Output:
	// api.example:8443
	// api.example
}
