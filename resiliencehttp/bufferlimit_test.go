package resiliencehttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// A failure whose body is exactly as long as what the Transport buffers
// (64 KiB) is read whole: its slot of the Bulkhead is free, and the Base's
// body closed, before the caller touches it, and the caller still reads
// it all. One byte more and the body holds its slot until it is closed.
func TestFailureBodyOfExactlyTheBufferedSizeIsReadWhole(t *testing.T) {
	const limit = 64 << 10
	for _, tt := range []struct {
		size     int
		holdSlot bool
	}{{limit, false}, {limit + 1, true}} {
		body := &trackedBody{ReadCloser: io.NopCloser(strings.NewReader(strings.Repeat("x", tt.size)))}
		base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, ContentLength: -1, Request: r, Body: body}, nil
		})
		bh := bulkhead.New(1)
		req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, "http://dependency.test/", nil)
		resp, err := (&resiliencehttp.Transport{Base: base, Bulkhead: bh}).RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := bh.InFlight() == 1, tt.holdSlot; got != want {
			t.Errorf("%d bytes: body holds its slot before it is read: %v, want %v", tt.size, got, want)
		}
		if got, want := body.closed.Load(), !tt.holdSlot; got != want {
			t.Errorf("%d bytes: the Base's body closed before the caller read it: %v, want %v", tt.size, got, want)
		}
		if got := readAll(t, resp); len(got) != tt.size {
			t.Errorf("%d bytes: the caller read %d bytes", tt.size, len(got))
		}
		if n := bh.InFlight(); n != 0 {
			t.Errorf("%d bytes: InFlight = %d after the body was read and closed, want 0", tt.size, n)
		}
	}
}
