package resiliencehttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
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

func ExampleStatusError() {
	// Inside the policies, a failing response is a *StatusError; its
	// RetryAfter is the Retry-After header, which a retry honours.
	var err error = &resiliencehttp.StatusError{StatusCode: 503, Status: "503 Service Unavailable", After: 5 * time.Second}
	d, _ := resilience.RetryAfter(err)
	fmt.Println(err, "|", d)
	// Output: resiliencehttp: 503 Service Unavailable (retry after 5s) | 5s
}

func ExampleErrBodyNotReplayable() {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	defer srv.Close()

	// A streamed body has no GetBody: it cannot be sent twice, so the
	// request is sent once however many attempts the retry allows.
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
