package resiliencehttp_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// countingBody counts its Close calls.
type countingBody struct {
	io.Reader
	mu     sync.Mutex
	closes int
}

func (b *countingBody) Close() error {
	b.mu.Lock()
	b.closes++
	b.mu.Unlock()
	return nil
}

func (b *countingBody) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closes
}

// Every response of a request is closed exactly once: each failure that a
// later one supersedes (bodies too long to read whole, so still on the
// network) by the Transport when it is superseded, the winner by the
// caller. None is left open, none closed twice (io.Closer leaves a second
// Close undefined).
func TestEveryResponseIsClosedOnce(t *testing.T) {
	big := strings.Repeat("x", 100<<10)
	for _, failures := range []int{1, 2, 3} {
		var bodies []*countingBody
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			status, text := http.StatusServiceUnavailable, big
			if len(bodies) == failures {
				status, text = http.StatusOK, "ok"
			}
			b := &countingBody{Reader: strings.NewReader(text)}
			bodies = append(bodies, b)
			return &http.Response{StatusCode: status, Header: http.Header{}, ContentLength: -1, Request: r, Body: b}, nil
		})
		req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, "http://dependency.test/", nil)
		resp, err := (&resiliencehttp.Transport{Base: base, Policy: noWait(failures + 1)}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, resp); got != "ok" {
			t.Errorf("%d failures first: body %q, want ok", failures, got)
		}
		var closes, want []int
		for _, b := range bodies {
			closes, want = append(closes, b.count()), append(want, 1)
		}
		if diff := cmp.Diff(want, closes); diff != "" {
			t.Errorf("%d failures first: closes of each response's body mismatch (-want +got):\n%s", failures, diff)
		}
	}
}
