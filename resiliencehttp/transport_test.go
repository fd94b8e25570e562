package resiliencehttp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// connCounter counts the connections a test server accepts and those still
// open.
type connCounter struct {
	opened, open atomic.Int64
}

func (c *connCounter) hook(_ net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		c.opened.Add(1)
		c.open.Add(1)
	case http.StateClosed, http.StateHijacked:
		c.open.Add(-1)
	}
}

// server starts a test server whose handler answers request n (from 1)
// with reply(n, r, w), and counts its connections.
func server(t *testing.T, reply func(n int, w http.ResponseWriter, r *http.Request)) (*httptest.Server, *connCounter) {
	t.Helper()
	var n atomic.Int64
	cc := &connCounter{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reply(int(n.Add(1)), w, r)
	}))
	srv.Config.ConnState = cc.hook
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, cc
}

// noWait retries at once: the tests are about what crosses the wire.
func noWait(attempts int) resilience.Policy[*http.Response] {
	return retry.New[*http.Response](retry.WithAttempts(attempts), retry.WithBackoff(backoff.Constant(0)))
}

func client(srv *httptest.Server, p resilience.Policy[*http.Response]) *http.Client {
	return &http.Client{Transport: &resiliencehttp.Transport{Base: srv.Client().Transport, Policy: p}, Timeout: wait}
}

// getAcross GETs url with c while the retry waits on fake: once one sleeper
// is armed, it advances fake by d, then requires the GET to succeed.
func getAcross(t *testing.T, c *http.Client, url string, fake *clock.Fake, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	blockUntil(t, fake, 1)
	fake.Advance(d)
	if err := recv(t, done, "the GET never returned"); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	return string(b)
}

func TestRetriesDrainDiscardedResponsesSoConnectionsAreReused(t *testing.T) {
	// Every request fails twice with a body, then succeeds. If the bodies of
	// the discarded 503s were not drained and closed, each retry would need
	// a connection of its own.
	srv, cc := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n%3 != 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, strings.Repeat("overloaded ", 500))
			return
		}
		fmt.Fprint(w, "ok")
	})
	c := client(srv, noWait(3))
	for i := range 20 {
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if got := readAll(t, resp); resp.StatusCode != 200 || got != "ok" {
			t.Fatalf("request %d: %d %q, want 200 ok", i, resp.StatusCode, got)
		}
	}
	if got := cc.opened.Load(); got != 1 {
		t.Errorf("server accepted %d connections for 60 sequential attempts, want 1 (discarded bodies leak connections)", got)
	}
}

func TestGivingUpReturnsTheLastResponseIntact(t *testing.T) {
	var seen atomic.Int64
	srv, cc := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, "attempt %d: upstream down", n)
	})
	c := client(srv, noWait(3))
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatalf("Get: %v; want the last response", err)
	}
	if got := readAll(t, resp); resp.StatusCode != http.StatusBadGateway || got != "attempt 3: upstream down" {
		t.Errorf("got %d %q, want 502 %q", resp.StatusCode, got, "attempt 3: upstream down")
	}
	if seen.Load() != 3 {
		t.Errorf("server saw %d attempts, want 3", seen.Load())
	}
	if got := cc.opened.Load(); got != 1 {
		t.Errorf("server accepted %d connections, want 1", got)
	}
}

func TestClassification(t *testing.T) {
	tests := []struct {
		code     int
		attempts int64 // with 3 allowed
	}{
		{200, 1}, {204, 1}, {301, 1}, {400, 1}, {404, 1}, {409, 1},
		{429, 3}, {500, 3}, {501, 1}, {502, 3}, {503, 3}, {504, 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			var seen atomic.Int64
			srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
				seen.Add(1)
				if tt.code == 301 {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tt.code)
			})
			tr := &resiliencehttp.Transport{Base: srv.Client().Transport, Policy: noWait(3)}
			req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, srv.URL, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.code || seen.Load() != tt.attempts {
				t.Errorf("status %d after %d attempts, want %d after %d", resp.StatusCode, seen.Load(), tt.code, tt.attempts)
			}
		})
	}
}

func TestCustomClassify(t *testing.T) {
	var seen atomic.Int64
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		w.WriteHeader(http.StatusConflict)
	})
	tr := &resiliencehttp.Transport{
		Base:     srv.Client().Transport,
		Policy:   noWait(2),
		Classify: func(r *http.Response) bool { return r.StatusCode == http.StatusConflict },
	}
	req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, srv.URL, nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen.Load() != 2 {
		t.Errorf("server saw %d attempts, want 2 (409 classified as a failure)", seen.Load())
	}
}

func TestRetriesReplayTheBody(t *testing.T) {
	var mu sync.Mutex
	var bodies []string
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	c := client(srv, noWait(3))
	resp, err := c.Post(srv.URL, "text/plain", strings.NewReader(`{"amount": 12}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d, want 200", resp.StatusCode)
	}
	want := []string{`{"amount": 12}`, `{"amount": 12}`, `{"amount": 12}`}
	if diff := cmp.Diff(want, bodies); diff != "" {
		t.Errorf("bodies the server saw mismatch (-want +got):\n%s", diff)
	}
}

// closeCounter is a body with no GetBody that records whether it was closed.
type closeCounter struct {
	io.Reader
	closed atomic.Int64
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

func TestBodyThatCannotBeReplayedIsSentOnce(t *testing.T) {
	var seen atomic.Int64
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, "busy")
	})
	body := &closeCounter{Reader: strings.NewReader("payload")}
	req, _ := http.NewRequestWithContext(bounded(t), http.MethodPost, srv.URL, body)
	if req.GetBody != nil {
		t.Fatal("test needs a request without GetBody")
	}
	retries := 0
	p := retry.New[*http.Response](retry.WithAttempts(5), retry.WithBackoff(backoff.Constant(0)),
		retry.WithOnRetry(func(int, error, time.Duration) { retries++ }))
	tr := &resiliencehttp.Transport{Base: srv.Client().Transport, Policy: p}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatalf("RoundTrip: %v; want the 503", err)
	}
	if retries != 0 {
		t.Errorf("retry waited %d times for a request it cannot resend, want 0 (the failure is permanent)", retries)
	}
	if got := readAll(t, resp); resp.StatusCode != 503 || got != "busy" {
		t.Errorf("got %d %q, want 503 busy", resp.StatusCode, got)
	}
	if seen.Load() != 1 {
		t.Errorf("server saw %d attempts of a non-replayable body, want 1", seen.Load())
	}
	if body.closed.Load() == 0 {
		t.Error("request body was not closed")
	}
}

func TestRetryAfterHeaderSetsTheWait(t *testing.T) {
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, "ok")
	})
	fake := clock.NewFake()
	var waits []time.Duration
	var errs []string
	p := retry.New[*http.Response](
		retry.WithAttempts(2),
		retry.WithBackoff(backoff.Constant(time.Millisecond)),
		retry.WithClock(fake),
		retry.WithOnRetry(func(_ int, err error, d time.Duration) {
			waits = append(waits, d)
			errs = append(errs, err.Error())
		}),
	)
	getAcross(t, client(srv, p), srv.URL, fake, 7*time.Second)
	if diff := cmp.Diff([]time.Duration{7 * time.Second}, waits); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"resiliencehttp: 429 Too Many Requests (retry after 7s)"}, errs); diff != "" {
		t.Errorf("errors mismatch (-want +got):\n%s", diff)
	}
}

func TestBodyOutlivesTheAttemptContext(t *testing.T) {
	// A policy may cancel its attempt's context when the attempt returns,
	// which is when the headers arrive: a timeout does, and so may a
	// user's own layer. The body must still be readable afterwards.
	for name, p := range map[string]resilience.Policy[*http.Response]{
		"timeout":          timeout.New[*http.Response](time.Hour),
		"cancel on return": cancelOnReturn(),
	} {
		t.Run(name, func(t *testing.T) {
			release := make(chan struct{})
			srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(200)
				w.(http.Flusher).Flush()
				select {
				case <-release:
				case <-r.Context().Done():
					return
				}
				fmt.Fprint(w, "late body")
			})
			resp, err := client(srv, p).Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			close(release)
			if got := readAll(t, resp); got != "late body" {
				t.Errorf("body %q, want %q", got, "late body")
			}
		})
	}
}

func TestAttemptContextCancelsTheRequestInFlight(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
		close(cancelled)
	})
	fake := clock.NewFake()
	c := client(srv, timeout.New[*http.Response](time.Second, timeout.WithClock(fake)))
	done := make(chan error, 1)
	go func() {
		resp, err := c.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	recv(t, started, "the request never reached the server")
	fake.Advance(time.Second)
	err := recv(t, done, "Get never returned after its timeout")
	if !errors.Is(err, timeout.ErrTimeout) {
		t.Errorf("Get = %v, want an error matching timeout.ErrTimeout", err)
	}
	recv(t, cancelled, "the server never saw the request cancelled")
}

func TestRefusalBeforeAnyAttemptClosesTheBody(t *testing.T) {
	refuse := resilience.New("refuse", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
		return nil, errors.New("refused")
	})
	body := &closeCounter{Reader: strings.NewReader("x")}
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/", body)
	tr := &resiliencehttp.Transport{Policy: refuse}
	resp, err := tr.RoundTrip(req)
	if resp != nil || err == nil || err.Error() != "refused" {
		t.Fatalf("RoundTrip = %v, %v; want nil, refused", resp, err)
	}
	if body.closed.Load() != 1 {
		t.Errorf("request body closed %d times, want 1", body.closed.Load())
	}
}

func TestFallbackResponseWinsAndAttemptsAreClosed(t *testing.T) {
	srv, cc := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, strings.Repeat("x", 1000))
	})
	p := noWait(2).Fallback(func(ctx context.Context, err error) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("cached")), Header: http.Header{}}, nil
	})
	c := client(srv, p)
	for range 5 {
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, resp); got != "cached" {
			t.Fatalf("body %q, want cached", got)
		}
	}
	if got := cc.opened.Load(); got != 1 {
		t.Errorf("server accepted %d connections, want 1 (attempt bodies not closed)", got)
	}
}

func TestCallerCancellationReturnsTheError(t *testing.T) {
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	ctx, cancel := context.WithCancel(context.Background())
	p := retry.New[*http.Response](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)),
		retry.WithOnRetry(func(int, error, time.Duration) { cancel() }))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := (&resiliencehttp.Transport{Base: srv.Client().Transport, Policy: p}).RoundTrip(req)
	if resp != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("RoundTrip = %v, %v; want nil and context.Canceled", resp, err)
	}
}

func TestZeroTransportSendsOnce(t *testing.T) {
	var seen atomic.Int64
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	resp, err := (&http.Client{Transport: &resiliencehttp.Transport{}, Timeout: wait}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || seen.Load() != 1 {
		t.Errorf("zero Transport: %d after %d attempts, want 503 after 1", resp.StatusCode, seen.Load())
	}
}

func TestLargeFailureBodyOfTheLastResponseIsIntact(t *testing.T) {
	big := strings.Repeat("0123456789", 10_000) // 100 kB, more than is buffered
	srv, cc := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "%d:%s", n, big)
	})
	c := client(srv, noWait(3))
	for i := range 3 {
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("%d:%s", 3*(i+1), big)
		if got := readAll(t, resp); got != want {
			t.Fatalf("request %d: body of %d bytes starting %q, want the last attempt's %d bytes", i, len(got), got[:min(len(got), 10)], len(want))
		}
	}
	if open := cc.open.Load(); open > 3 {
		t.Errorf("%d connections open after the requests, want at most one per attempt in flight", open)
	}
}

func TestRetryAfterDateIsRelativeToTheResponseDate(t *testing.T) {
	// The server's clock is far from ours; the wait is what the server meant.
	serverNow := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("Date", serverNow.Format(http.TimeFormat))
			w.Header().Set("Retry-After", serverNow.Add(3*time.Second).Format(http.TimeFormat))
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	fake := clock.NewFake()
	var waits []time.Duration
	p := retry.New[*http.Response](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)), retry.WithClock(fake),
		retry.WithOnRetry(func(_ int, _ error, d time.Duration) { waits = append(waits, d) }))
	getAcross(t, client(srv, p), srv.URL, fake, 3*time.Second)
	if diff := cmp.Diff([]time.Duration{3 * time.Second}, waits); diff != "" {
		t.Errorf("waits mismatch (-want +got):\n%s", diff)
	}
}

// trackingTransport records, for each attempt, how many earlier response
// bodies were still open when it was sent.
type trackingTransport struct {
	base      http.RoundTripper
	arrived   chan<- struct{} // if not nil, told when each response's headers arrive
	mu        sync.Mutex
	bodies    []*trackedBody
	openAtTry []int
}

type trackedBody struct {
	io.ReadCloser
	closed atomic.Bool
}

func (b *trackedBody) Close() error { b.closed.Store(true); return b.ReadCloser.Close() }

func (tt *trackingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tt.mu.Lock()
	open := 0
	for _, b := range tt.bodies {
		if !b.closed.Load() {
			open++
		}
	}
	tt.openAtTry = append(tt.openAtTry, open)
	tt.mu.Unlock()
	resp, err := tt.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b := &trackedBody{ReadCloser: resp.Body}
	resp.Body = b
	tt.mu.Lock()
	tt.bodies = append(tt.bodies, b)
	tt.mu.Unlock()
	if tt.arrived != nil {
		select {
		case tt.arrived <- struct{}{}:
		case <-r.Context().Done():
		}
	}
	return resp, nil
}

func TestAtMostOneDiscardedResponseIsHeldOpen(t *testing.T) {
	big := strings.Repeat("x", 200_000) // too large to buffer
	for _, size := range []int{10, len(big)} {
		srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, big[:size])
		})
		tt := &trackingTransport{base: srv.Client().Transport}
		req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, srv.URL, nil)
		resp, err := (&resiliencehttp.Transport{Base: tt, Policy: noWait(4)}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, resp); len(got) != size {
			t.Errorf("size %d: last body has %d bytes", size, len(got))
		}
		want := []int{0, 1, 1, 1} // the newest failure, kept in case it is the last
		if size <= 64<<10 {
			want = []int{0, 0, 0, 0} // buffered and closed at once
		}
		if diff := cmp.Diff(want, tt.openAtTry); diff != "" {
			t.Errorf("size %d: response bodies open when each attempt was sent mismatch (-want +got):\n%s", size, diff)
		}
		for i, b := range tt.bodies {
			if !b.closed.Load() {
				t.Errorf("size %d: body of attempt %d never closed", size, i+1)
			}
		}
	}
}

// cancelOnReturn is a policy that, like many, cancels the context it gave
// the rest of the chain as soon as that returns.
func cancelOnReturn() resilience.Policy[*http.Response] {
	return resilience.New("cancel-on-return", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		return next.Call(ctx)
	})
}

func TestHedgeOfANonReplayableBodyIsRefused(t *testing.T) {
	release := make(chan struct{})
	var seen atomic.Int64
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "done")
	})
	fake := clock.NewFake()
	p := hedge.New[*http.Response](time.Millisecond, hedge.WithClock(fake))
	req, _ := http.NewRequest(http.MethodPost, srv.URL, &closeCounter{Reader: strings.NewReader("x")})
	tr := &resiliencehttp.Transport{Base: srv.Client().Transport, Policy: p}
	done := make(chan struct{})
	var resp *http.Response
	var err error
	go func() {
		defer close(done)
		resp, err = tr.RoundTrip(req)
	}()
	blockUntil(t, fake, 1)
	fake.Advance(time.Millisecond) // the hedge starts a second attempt, which must not send
	close(release)
	recv(t, done, "RoundTrip never returned")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); got != "done" {
		t.Errorf("body %q, want done", got)
	}
	if seen.Load() != 1 {
		t.Errorf("server saw %d requests, want 1", seen.Load())
	}
}

func TestErrBodyNotReplayableIsARefusal(t *testing.T) {
	// A sentinel of its own, with a message of its own, that matches
	// resilience.ErrRefused (a breaker does not count it).
	err := resiliencehttp.ErrBodyNotReplayable
	const want = "resiliencehttp: request body cannot be replayed (no GetBody)"
	if err.Error() != want || !errors.Is(err, resilience.ErrRefused) {
		t.Errorf("ErrBodyNotReplayable = %q, errors.Is(ErrRefused) = %v; want %q, true", err, errors.Is(err, resilience.ErrRefused), want)
	}
}

// stallingServer answers every request with a 503 whose headers promise 100
// bytes, sends 7, and then stalls until the client gives up on the request
// (which closes its connection); it tells gone the request's number then.
func stallingServer(t *testing.T, gone chan<- int) *httptest.Server {
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprint(w, "partial")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		gone <- n
	})
	return srv
}

func TestStalledFailureBodyIsBoundedByTheAttempt(t *testing.T) {
	// A 503 whose body stalls after its headers: the attempt's timeout ends
	// the read of the body, the retry goes on, and the caller gets the
	// timeout, not a response whose body is broken.
	attempts3 := retry.New[*http.Response](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
	for name, p := range map[string]resilience.Policy[*http.Response]{
		"timeout":            resilience.Then(attempts3, timeout.New[*http.Response](200*time.Millisecond)),
		"abandoning timeout": resilience.Then(attempts3, timeout.New[*http.Response](200*time.Millisecond, timeout.WithAbandon(true))),
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mt := &memTransport{reply: func(int) memReply {
					return memReply{status: http.StatusServiceUnavailable, body: "partial", stall: true}
				}}
				c := &http.Client{Transport: &resiliencehttp.Transport{Base: mt, Policy: p}}
				start := time.Now()
				resp, err := c.Get("http://dependency.test/")
				elapsed := time.Since(start)
				if resp != nil {
					resp.Body.Close()
					t.Fatalf("Get returned a %d response (error %v), want no response", resp.StatusCode, err)
				}
				const want = `Get "http://dependency.test/": retry: gave up after 3 attempts: timeout: call exceeded 200ms`
				if err == nil || err.Error() != want {
					t.Errorf("Get error = %v, want %s", err, want)
				}
				if !errors.Is(err, timeout.ErrTimeout) {
					t.Errorf("Get error %v does not match timeout.ErrTimeout", err)
				}
				if elapsed != 600*time.Millisecond {
					t.Errorf("Get took %v, want 3 attempts of 200ms", elapsed)
				}
				synctest.Wait() // abandoned attempts return
				if got := mt.attempts(); got != 3 {
					t.Errorf("%d attempts, want 3", got)
				}
				if open, all := mt.open(); open != 0 {
					t.Errorf("%d of %d response bodies left open", open, all)
				}
			})
		})
	}
}

func TestHedgeCancelsAnAttemptStuckInAFailureBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		mt := &memTransport{reply: func(n int) memReply {
			if n == 1 {
				return memReply{status: http.StatusServiceUnavailable, body: "partial", stall: true}
			}
			return memReply{status: http.StatusOK, body: "ok"}
		}}
		tr := &resiliencehttp.Transport{Base: mt, Policy: hedge.New[*http.Response](50 * time.Millisecond)}
		req, _ := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
		start := time.Now()
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, resp); resp.StatusCode != http.StatusOK || got != "ok" {
			t.Errorf("got %d %q, want the hedge's 200 ok", resp.StatusCode, got)
		}
		if elapsed := time.Since(start); elapsed != 50*time.Millisecond {
			t.Errorf("RoundTrip took %v, want 50ms (the hedge won at once)", elapsed)
		}
		synctest.Wait()
		if open, all := mt.open(); open != 0 {
			t.Errorf("%d of %d response bodies left open", open, all)
		}
	})
}

// Regression: a 503 with Retry-After: 3 through a hedge of 50ms made a 3s
// round trip, and Retry-After: 1000 one of 16 minutes. A hint longer than
// the hedge's MaxWait (by default its delay) starts no more attempts: the
// caller gets the 503 at once. Retry-After: 0 starts the next at once.
func TestHedgeDoesNotWaitOutALongRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		retryAfter string
		status     int // of the response the caller gets
		attempts   int
	}{
		{"3", http.StatusServiceUnavailable, 1},
		{"1000", http.StatusServiceUnavailable, 1},
		{"0", http.StatusOK, 2},
	} {
		t.Run("Retry-After "+tc.retryAfter, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mt := &memTransport{reply: func(n int) memReply {
					if n == 1 {
						return memReply{status: http.StatusServiceUnavailable, body: "busy", header: http.Header{"Retry-After": {tc.retryAfter}}}
					}
					return memReply{status: http.StatusOK, body: "ok"}
				}}
				tr := &resiliencehttp.Transport{Base: mt, Policy: hedge.New[*http.Response](50 * time.Millisecond)}
				req, _ := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
				start := time.Now()
				resp, err := tr.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				readAll(t, resp)
				if elapsed := time.Since(start); resp.StatusCode != tc.status || elapsed != 0 {
					t.Errorf("Retry-After %s: got %d after %v, want %d at once", tc.retryAfter, resp.StatusCode, elapsed, tc.status)
				}
				synctest.Wait()
				if got := mt.attempts(); got != tc.attempts {
					t.Errorf("Retry-After %s: %d attempts, want %d", tc.retryAfter, got, tc.attempts)
				}
				if open, all := mt.open(); open != 0 {
					t.Errorf("%d of %d response bodies left open", open, all)
				}
			})
		})
	}
}

func TestStalledFailureBodyOverTheNetworkReleasesItsConnection(t *testing.T) {
	// The same over a real connection: when an attempt's timeout ends the
	// read of its 503's body, the connection is closed (the server sees the
	// request cancelled) and the retry goes on.
	gone := make(chan int, 2)
	srv := stallingServer(t, gone)
	fake := clock.NewFake()
	arrived := make(chan struct{})
	tt := &trackingTransport{base: srv.Client().Transport, arrived: arrived}
	p := resilience.Then(noWait(2), timeout.New[*http.Response](200*time.Millisecond, timeout.WithClock(fake)))
	c := &http.Client{Transport: &resiliencehttp.Transport{Base: tt, Policy: p}}
	done := make(chan error, 1)
	go func() {
		resp, err := c.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("got a %d response, want an error", resp.StatusCode)
		}
		done <- err
	}()
	for i := range 2 {
		recv(t, arrived, fmt.Sprintf("the headers of attempt %d never arrived", i+1)) // the attempt reads its body now
		fake.Advance(200 * time.Millisecond)
		if n := recv(t, gone, fmt.Sprintf("the server never saw attempt %d cancelled", i+1)); n != i+1 {
			t.Errorf("server saw request %d cancelled, want %d", n, i+1)
		}
	}
	if err := recv(t, done, "Get never returned"); !errors.Is(err, timeout.ErrTimeout) {
		t.Errorf("Get = %v, want an error matching timeout.ErrTimeout", err)
	}
	for i, b := range tt.bodies {
		if !b.closed.Load() {
			t.Errorf("body of attempt %d never closed", i+1)
		}
	}
}

func TestBrokenFailureBodyIsAnErrorNotAResponse(t *testing.T) {
	// A 503 whose connection breaks in the middle of its body is the
	// attempt's error; the caller gets a response only if one arrived whole.
	tests := []struct {
		name     string
		whole    []bool // per attempt: does the 503's body arrive whole?
		wantBody string // of the response the caller gets; "" for an error
	}{
		{"every body broken", []bool{false, false}, ""},
		{"an earlier body whole", []bool{true, false}, "attempt 1 failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if tt.whole[n-1] {
					w.WriteHeader(http.StatusServiceUnavailable)
					fmt.Fprintf(w, "attempt %d failed", n)
					return
				}
				w.Header().Set("Content-Length", "100")
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprint(w, "partial")
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler) // the connection breaks
			})
			resp, err := client(srv, noWait(2)).Get(srv.URL)
			if tt.wantBody != "" {
				if err != nil {
					t.Fatalf("Get: %v; want the whole 503", err)
				}
				if got := readAll(t, resp); resp.StatusCode != 503 || got != tt.wantBody {
					t.Errorf("got %d %q, want 503 %q", resp.StatusCode, got, tt.wantBody)
				}
				return
			}
			if resp != nil {
				body, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				t.Fatalf("Get returned %d %q (body error %v) and error %v, want no response", resp.StatusCode, body, rerr, err)
			}
			want := fmt.Sprintf(`Get "%s": retry: gave up after 2 attempts: resiliencehttp: 503 Service Unavailable: reading its body: unexpected EOF`, srv.URL)
			if err == nil || err.Error() != want {
				t.Errorf("Get error = %v, want %s", err, want)
			}
			var se *resiliencehttp.StatusError
			if !errors.As(err, &se) || se.StatusCode != 503 || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("Get error %v does not carry the 503's StatusError and io.ErrUnexpectedEOF", err)
			}
		})
	}
}

func TestAttemptThatOutlivesRoundTripLeavesNothingOpen(t *testing.T) {
	// A layer may return before the attempts it started are done (a timeout
	// WithAbandon does): a response that arrives after RoundTrip returned
	// has no one to read it and must be closed, and an attempt that starts
	// after RoundTrip returned must not send the request, which the caller
	// may be reusing.
	errGaveUp := errors.New("gave up")
	t.Run("finishes late", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			gate := make(chan struct{})
			entered := make(chan int, 1)
			mt := &memTransport{entered: entered, reply: func(int) memReply {
				return memReply{status: http.StatusOK, body: "late", gate: gate}
			}}
			detach := resilience.New("detach", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
				go next.Call(ctx)
				<-entered // the attempt is in flight
				return nil, errGaveUp
			})
			req, _ := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
			if _, err := (&resiliencehttp.Transport{Base: mt, Policy: detach}).RoundTrip(req); err != errGaveUp {
				t.Fatalf("RoundTrip error %v, want %v", err, errGaveUp)
			}
			close(gate) // the response arrives
			synctest.Wait()
			if open, all := mt.open(); all != 1 || open != 0 {
				t.Errorf("%d of %d late response bodies left open, want 0 of 1", open, all)
			}
		})
	})
	t.Run("starts late", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			mt := &memTransport{reply: func(int) memReply { return memReply{status: http.StatusOK, body: "late"} }}
			start := make(chan struct{})
			lateErr := make(chan error, 1)
			detach := resilience.New("detach", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
				go func() {
					<-start
					_, err := next.Call(ctx)
					lateErr <- err
				}()
				return nil, errGaveUp
			})
			req, _ := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
			if _, err := (&resiliencehttp.Transport{Base: mt, Policy: detach}).RoundTrip(req); err != errGaveUp {
				t.Fatalf("RoundTrip error %v, want %v", err, errGaveUp)
			}
			close(start)
			synctest.Wait()
			if n := mt.attempts(); n != 0 {
				t.Errorf("%d requests sent after RoundTrip returned, want 0", n)
			}
			if err := <-lateErr; !errors.Is(err, resilience.ErrRefused) {
				t.Errorf("late attempt's error %v, want one matching resilience.ErrRefused", err)
			}
		})
	})
}

func TestTimeoutOfANonReplayableRequestIsSaidOnce(t *testing.T) {
	// The attempt's failure is marked permanent (the body cannot be sent
	// again) and the timeout wraps it: the message says the timeout once,
	// and the error still matches what a timeout's does.
	for name, rep := range map[string]memReply{
		"before the headers":  {status: 0},
		"in the failure body": {status: http.StatusServiceUnavailable, body: "partial", stall: true},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mt := &memTransport{reply: func(int) memReply { return rep }}
				retries := 0
				p := resilience.Then(
					retry.New[*http.Response](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)),
						retry.WithOnRetry(func(int, error, time.Duration) { retries++ })),
					timeout.New[*http.Response](100*time.Millisecond),
				)
				req, _ := http.NewRequest(http.MethodPost, "http://dependency.test/", &closeCounter{Reader: strings.NewReader("x")})
				resp, err := (&http.Client{Transport: &resiliencehttp.Transport{Base: mt, Policy: p}}).Do(req)
				if resp != nil {
					resp.Body.Close()
					t.Fatalf("Do returned a %d response, want an error", resp.StatusCode)
				}
				const want = `Post "http://dependency.test/": timeout: call exceeded 100ms`
				if err == nil || err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
				var ue *url.Error
				if !errors.Is(err, timeout.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ue) || !ue.Timeout() {
					t.Errorf("error %v: want it to match timeout.ErrTimeout and context.DeadlineExceeded, and Timeout() true", err)
				}
				if errors.Is(err, resiliencehttp.ErrBodyNotReplayable) || errors.Is(err, resilience.ErrRefused) {
					t.Errorf("error %v matches a refusal, but the request was sent", err)
				}
				if n := mt.attempts(); n != 1 || retries != 0 {
					t.Errorf("%d attempts after %d retries, want 1 after 0 (the body cannot be sent again)", n, retries)
				}
			})
		})
	}
}

// idleCloser is a base transport that counts CloseIdleConnections calls.
type idleCloser struct {
	http.RoundTripper
	closed atomic.Int64
}

func (c *idleCloser) CloseIdleConnections() { c.closed.Add(1) }

// http.Client.CloseIdleConnections reaches the base transport through the
// Transport (else idle connections and their goroutines stay).
func TestCloseIdleConnectionsReachesTheBase(t *testing.T) {
	base := &idleCloser{RoundTripper: http.DefaultTransport}
	c := &http.Client{Transport: &resiliencehttp.Transport{Base: base}}
	c.CloseIdleConnections()
	if got := base.closed.Load(); got != 1 {
		t.Errorf("base.CloseIdleConnections called %d times, want 1", got)
	}
	// Neither a nil Base nor a base without the method is a problem.
	(&resiliencehttp.Transport{}).CloseIdleConnections()
	(&resiliencehttp.Transport{Base: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil })}).CloseIdleConnections()
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// recordingBase is a Base that reads each attempt's body itself, as a
// custom RoundTripper does (no rewinding through GetBody of its own), and
// records what it read; answer says how attempt n (from 1) is answered,
// after reading at most read bytes of its body (-1: all).
type recordingBase struct {
	read   int
	answer func(n int) (status int, err error)

	mu     sync.Mutex
	bodies []string
	sizes  []int64 // ContentLength of each attempt
}

func (b *recordingBase) RoundTrip(r *http.Request) (*http.Response, error) {
	var got []byte
	if r.Body != nil {
		var rd io.Reader = r.Body
		if b.read >= 0 {
			rd = io.LimitReader(r.Body, int64(b.read))
		}
		got, _ = io.ReadAll(rd)
		r.Body.Close()
	}
	b.mu.Lock()
	b.bodies = append(b.bodies, string(got))
	b.sizes = append(b.sizes, r.ContentLength)
	n := len(b.bodies)
	b.mu.Unlock()
	status, err := b.answer(n)
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: http.Header{},
		Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
}

func TestRetriesReplayTheWholeBodyToACustomBase(t *testing.T) {
	const payload = `{"amount": 12}`
	failTwice := func(n int) (int, error) {
		switch n {
		case 1:
			return 0, errors.New("connection reset by peer")
		case 2:
			return http.StatusServiceUnavailable, nil
		}
		return http.StatusOK, nil
	}
	for _, tt := range []struct {
		name string
		read int // how much of each attempt's body the base reads before answering
		body func() io.Reader
	}{
		{"strings.Reader, read whole", -1, func() io.Reader { return strings.NewReader(payload) }},
		{"bytes.Buffer, read whole", -1, func() io.Reader { return bytes.NewBufferString(payload) }},
		{"bytes.Reader, read in part", 5, func() io.Reader { return bytes.NewReader([]byte(payload)) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := &recordingBase{read: tt.read, answer: failTwice}
			req, err := http.NewRequest(http.MethodPost, "http://dependency.test/", tt.body())
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&resiliencehttp.Transport{Base: base, Policy: noWait(3)}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("status %d, want 200", resp.StatusCode)
			}
			want := payload
			if tt.read >= 0 {
				want = payload[:tt.read]
			}
			if diff := cmp.Diff([]string{want, want, want}, base.bodies); diff != "" {
				t.Errorf("bodies the base read on each attempt mismatch (-want +got):\n%s", diff)
			}
			n := int64(len(payload))
			if diff := cmp.Diff([]int64{n, n, n}, base.sizes); diff != "" {
				t.Errorf("ContentLength of each attempt mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
