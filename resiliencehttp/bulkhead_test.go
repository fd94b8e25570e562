package resiliencehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

func TestBulkheadBoundsWholeExchangesAtTheServer(t *testing.T) {
	// Ten callers, two slots, and bodies that stream: the server writes the
	// headers and the start of the body, and the rest only when the test
	// says so. The server counts the exchanges it serves at once; a slot
	// given back when the headers arrive would let all ten in.
	const slots, callers = 2, 10
	var active, peak atomic.Int64
	entered := make(chan struct{}, callers)
	proceed := make(chan struct{})
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		a := active.Add(1)
		for p := peak.Load(); a > p && !peak.CompareAndSwap(p, a); p = peak.Load() {
		}
		defer active.Add(-1) // before the body's end reaches the client
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "head ")
		w.(http.Flusher).Flush()
		entered <- struct{}{}
		select {
		case <-proceed:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "tail")
	})
	bh := bulkhead.New(slots, bulkhead.WithMaxQueue(callers))
	c := &http.Client{Transport: &resiliencehttp.Transport{Base: srv.Client().Transport, Bulkhead: bh}, Timeout: wait}
	errs := make(chan error, callers)
	for range callers {
		go func() {
			resp, err := c.Get(srv.URL)
			if err != nil {
				errs <- err
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err == nil && string(b) != "head tail" {
				err = fmt.Errorf("body %q, want %q", b, "head tail")
			}
			errs <- err
		}()
	}
	for i := range slots {
		recv(t, entered, fmt.Sprintf("only %d of %d exchanges reached the server", i, slots))
	}
	for i := range callers {
		send(t, proceed, struct{}{}, fmt.Sprintf("no exchange at the server to finish (%d of %d done)", i, callers))
		if i+slots < callers {
			recv(t, entered, fmt.Sprintf("exchange %d never reached the server after %d finished (slot not given back at the body's end?)", i+slots+1, i+1))
		}
	}
	for i := range callers {
		if err := recv(t, errs, fmt.Sprintf("caller %d of %d never finished", i+1, callers)); err != nil {
			t.Error(err)
		}
	}
	if got := peak.Load(); got != slots {
		t.Errorf("the server served up to %d exchanges at once, want %d (the bulkhead's slots), bodies included", got, slots)
	}
	if n := bh.InFlight(); n != 0 {
		t.Errorf("bulkhead InFlight = %d after every exchange, want 0", n)
	}
}

func TestBulkheadQueuesExchangesUntilABodyEnds(t *testing.T) {
	// The same in a synctest bubble, step by step: at every point at most
	// two exchanges are in flight at the in-memory server, and the others
	// wait in the bulkhead's queue.
	synctest.Test(t, func(t *testing.T) {
		const slots, callers = 2, 6
		rest := make([]chan struct{}, callers+1) // rest[n] lets exchange n's body end
		for i := range rest {
			rest[i] = make(chan struct{})
		}
		mt := &memTransport{reply: func(n int) memReply {
			return memReply{status: http.StatusOK, body: "head ", rest: rest[n]}
		}}
		bh := bulkhead.New(slots, bulkhead.WithMaxQueue(callers))
		c := &http.Client{Transport: &resiliencehttp.Transport{Base: mt, Bulkhead: bh}}
		bodies := make(chan string, callers)
		for range callers {
			go func() {
				resp, err := c.Get("http://dependency.test/")
				if err != nil {
					bodies <- err.Error()
					return
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body) // ends the exchange at EOF
				if err != nil {
					bodies <- err.Error()
					return
				}
				bodies <- string(b)
			}()
		}
		for n := 1; n <= callers; n++ {
			synctest.Wait()
			live, _ := mt.inFlight()
			want := min(slots, callers-n+1)
			if live != want || bh.Queued() != callers-n+1-want {
				t.Errorf("before body %d ends: %d exchanges in flight and %d queued, want %d and %d", n, live, bh.Queued(), want, callers-n+1-want)
				for ; n <= callers; n++ {
					close(rest[n]) // let every exchange end
				}
				break
			}
			close(rest[n])
		}
		synctest.Wait()
		for range callers {
			if got := <-bodies; got != "head " {
				t.Errorf("body %q, want %q", got, "head ")
			}
		}
		if _, peak := mt.inFlight(); peak != slots {
			t.Errorf("up to %d exchanges in flight at once, want %d", peak, slots)
		}
		if n := bh.InFlight(); n != 0 {
			t.Errorf("bulkhead InFlight = %d after every exchange, want 0", n)
		}
	})
}

func TestBulkheadSlotIsGivenBackWhenTheExchangeEnds(t *testing.T) {
	// held says whether the slot is still held once RoundTrip returned;
	// finish then ends the exchange as a caller would (cancel cancels the
	// request's context), after which no slot may be held.
	tests := []struct {
		name   string
		reply  memReply
		held   bool
		finish func(t *testing.T, resp *http.Response, cancel context.CancelFunc)
	}{
		{"closed unread", memReply{status: 200, body: "hello"}, true, func(t *testing.T, resp *http.Response, _ context.CancelFunc) {
			resp.Body.Close()
		}},
		{"closed early", memReply{status: 200, body: "hello", stall: true}, true, func(t *testing.T, resp *http.Response, _ context.CancelFunc) {
			if _, err := io.ReadFull(resp.Body, make([]byte, 2)); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}},
		{"read to EOF, never closed", memReply{status: 200, body: "hello"}, true, func(t *testing.T, resp *http.Response, _ context.CancelFunc) {
			if _, err := io.ReadAll(resp.Body); err != nil {
				t.Fatal(err)
			}
		}},
		{"read cut off by the caller, never closed", memReply{status: 200, body: "hel", stall: true}, true, func(t *testing.T, resp *http.Response, cancel context.CancelFunc) {
			done := make(chan error, 1)
			go func() { _, err := io.ReadAll(resp.Body); done <- err }()
			synctest.Wait() // the read stalls
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("read = %v, want context.Canceled", err)
			}
		}},
		{"failure read whole", memReply{status: 503, body: "busy"}, false, func(t *testing.T, resp *http.Response, _ context.CancelFunc) {
			resp.Body.Close()
		}},
		{"failure too large to read whole", memReply{status: 503, body: "busy", big: true}, true, func(t *testing.T, resp *http.Response, _ context.CancelFunc) {
			resp.Body.Close()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				mt := &memTransport{reply: func(int) memReply { return tt.reply }}
				bh := bulkhead.New(1)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://dependency.test/", nil)
				resp, err := (&resiliencehttp.Transport{Base: mt, Bulkhead: bh}).RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				if tt.held {
					want = 1
				}
				if got := bh.InFlight(); got != want {
					t.Errorf("InFlight = %d once RoundTrip returned, want %d", got, want)
				}
				tt.finish(t, resp, cancel)
				if n := bh.InFlight(); n != 0 {
					t.Errorf("InFlight = %d once the exchange ended, want 0 (slot leaked)", n)
				}
				if !bh.TryAcquire() {
					t.Fatal("the slot cannot be taken again")
				}
				bh.Release()
			})
		})
	}
}

func TestBulkheadSlotOfEveryAttemptIsGivenBack(t *testing.T) {
	for name, bh := range map[string]func() *bulkhead.Bulkhead{
		"retries":              func() *bulkhead.Bulkhead { return bulkhead.New(1) },
		"retries with a queue": func() *bulkhead.Bulkhead { return bulkhead.New(1, bulkhead.WithMaxQueue(1)) },
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// Three attempts, one at a time: each takes the only slot
				// and gives it back, else the next would be refused (or wait
				// for ever in the queue). The first failure's body is too
				// long to read whole: kept in case it is the last response,
				// it holds the slot, so the next attempt closes it first.
				mt := &memTransport{reply: func(n int) memReply {
					if n < 3 {
						return memReply{status: 503, body: "busy", big: n == 1}
					}
					return memReply{status: 200, body: "ok"}
				}}
				bh := bh()
				p := retry.New[*http.Response](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(0)))
				resp, err := (&http.Client{Transport: &resiliencehttp.Transport{Base: mt, Policy: p, Bulkhead: bh}}).Get("http://dependency.test/")
				if err != nil {
					t.Fatal(err)
				}
				if got := readAll(t, resp); got != "ok" || mt.attempts() != 3 {
					t.Errorf("got %d %.10q after %d attempts, want 200 ok after 3", resp.StatusCode, got, mt.attempts())
				}
				if n := bh.InFlight(); n != 0 {
					t.Errorf("InFlight = %d, want 0", n)
				}
				if open, all := mt.open(); open != 0 {
					t.Errorf("%d of %d bodies left open", open, all)
				}
			})
		})
	}
	t.Run("transport error", func(t *testing.T) {
		bh := bulkhead.New(1)
		refused := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") })
		req, _ := http.NewRequest(http.MethodGet, "http://dependency.test/", nil)
		if _, err := (&resiliencehttp.Transport{Base: refused, Bulkhead: bh}).RoundTrip(req); err == nil {
			t.Fatal("RoundTrip succeeded, want the transport's error")
		}
		if n := bh.InFlight(); n != 0 {
			t.Errorf("InFlight = %d after a failed round trip, want 0", n)
		}
	})
	t.Run("hedge losers", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// Attempts 1 and 2 get responses the hedge does not accept (203,
			// stale), one whose body ends and one whose body stalls;
			// attempt 3 wins. The Transport discards the losers in the
			// background: their slots come back once they are drained, or
			// given up on.
			mt := &memTransport{reply: func(n int) memReply {
				switch n {
				case 1:
					return memReply{status: 203, body: "stale"}
				case 2:
					return memReply{status: 203, body: "stale", stall: true}
				}
				return memReply{status: 200, body: "fresh"}
			}}
			bh := bulkhead.New(3)
			p := hedge.New[*http.Response](time.Hour, hedge.WithMaxHedges(2), hedge.WithAccept(func(resp *http.Response, err error) bool {
				return err == nil && resp.StatusCode == 200
			}))
			start := time.Now()
			resp, err := (&http.Client{Transport: &resiliencehttp.Transport{Base: mt, Policy: p, Bulkhead: bh}}).Get("http://dependency.test/")
			if err != nil {
				t.Fatal(err)
			}
			if elapsed := time.Since(start); elapsed != 0 {
				t.Errorf("Get took %v, want no wait for the losers", elapsed)
			}
			if got := readAll(t, resp); got != "fresh" {
				t.Errorf("body %q, want fresh", got)
			}
			synctest.Wait()
			if n := bh.InFlight(); n != 1 {
				t.Errorf("InFlight = %d once the ended loser is drained, want 1 (the stalled one)", n)
			}
			time.Sleep(time.Second) // the drain of the stalled loser is given up on
			synctest.Wait()
			if n := bh.InFlight(); n != 0 {
				t.Errorf("InFlight = %d after the drains, want 0", n)
			}
			if open, all := mt.open(); open != 0 {
				t.Errorf("%d of %d bodies left open", open, all)
			}
		})
	})
}

func TestBulkheadRefusalIsTheAttemptsError(t *testing.T) {
	// A full bulkhead refuses the attempt before it is sent: the request's
	// body is not consumed, so a later attempt can still send a body that
	// cannot be replayed.
	bh := bulkhead.New(1)
	if !bh.TryAcquire() {
		t.Fatal("TryAcquire failed")
	}
	var sent []string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		sent = append(sent, string(b))
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("ok")), Header: http.Header{}, Request: r}, nil
	})
	var errs []error
	p := retry.New[*http.Response](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)),
		retry.WithOnRetry(func(_ int, err error, _ time.Duration) {
			errs = append(errs, err)
			bh.Release() // the slot comes free before the retry
		}))
	req, _ := http.NewRequest(http.MethodPost, "http://dependency.test/", io.NopCloser(strings.NewReader("once")))
	resp, err := (&resiliencehttp.Transport{Base: base, Policy: p, Bulkhead: bh}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, resp); got != "ok" {
		t.Errorf("body %q, want ok", got)
	}
	if len(errs) != 1 || !errors.Is(errs[0], bulkhead.ErrFull) || !errors.Is(errs[0], resilience.ErrRefused) {
		t.Errorf("retried after %v, want one error matching bulkhead.ErrFull and resilience.ErrRefused", errs)
	}
	if diff := cmp.Diff([]string{"once"}, sent); diff != "" {
		t.Errorf("bodies sent mismatch (-want +got):\n%s", diff)
	}
	if n := bh.InFlight(); n != 0 {
		t.Errorf("InFlight = %d, want 0", n)
	}
}

func TestBulkheadGivesBackTheSlotOfAResponseWithoutABody(t *testing.T) {
	// A response without a body (to a HEAD, a 204, a 304, Content-Length:
	// 0) ends its exchange with its headers: its slot is free before its
	// body is closed, and its body is still http.NoBody, as net/http gives
	// it.
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		case "/empty":
			w.Header().Set("Content-Length", "0")
		case "/503":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			fmt.Fprint(w, "body")
		}
	})
	tests := []struct{ method, path string }{
		{http.MethodHead, "/"},
		{http.MethodGet, "/204"},
		{http.MethodGet, "/304"},
		{http.MethodGet, "/empty"},
		{http.MethodGet, "/503"}, // a failure, the last response: the caller gets it
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			bh := bulkhead.New(1)
			tr := &resiliencehttp.Transport{Base: srv.Client().Transport, Bulkhead: bh}
			req, _ := http.NewRequestWithContext(bounded(t), tt.method, srv.URL+tt.path, nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if n := bh.InFlight(); n != 0 {
				t.Errorf("InFlight = %d with the %d response's body still open, want 0: it has no body", n, resp.StatusCode)
			}
			if resp.Body != http.NoBody {
				t.Errorf("Body is %T, want http.NoBody", resp.Body)
			}
			req, _ = http.NewRequestWithContext(bounded(t), tt.method, srv.URL+tt.path, nil)
			if resp, err := (&resiliencehttp.Transport{Base: srv.Client().Transport}).RoundTrip(req); err != nil {
				t.Error(err)
			} else if resp.Body.Close(); resp.Body != http.NoBody {
				t.Errorf("without a Bulkhead, Body is %T, want http.NoBody", resp.Body)
			}
		})
	}
}

func TestBulkheadGivesBackTheSlotOfABodylessResponseOfACustomBase(t *testing.T) {
	// A Base of one's own may give a response without a body an empty
	// reader of its own: that body is the caller's still (closing it
	// closes the Base's), but it holds no slot.
	tests := []struct {
		name   string
		method string
		status int
		length int64
	}{
		{"HEAD", http.MethodHead, 200, -1},
		{"204", http.MethodGet, 204, -1},
		{"304", http.MethodGet, 304, -1},
		{"Content-Length 0", http.MethodGet, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := &trackedBody{ReadCloser: io.NopCloser(strings.NewReader(""))}
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: tt.status, Header: http.Header{}, ContentLength: tt.length, Request: r, Body: body}, nil
			})
			bh := bulkhead.New(1)
			req, _ := http.NewRequestWithContext(bounded(t), tt.method, "http://dependency.test/", nil)
			resp, err := (&resiliencehttp.Transport{Base: base, Bulkhead: bh}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if n := bh.InFlight(); n != 0 {
				t.Errorf("InFlight = %d with the body still open, want 0: the response has no body", n)
			}
			resp.Body.Close()
			if !body.closed.Load() {
				t.Error("closing the response's body did not close the Base's")
			}
		})
	}
}
