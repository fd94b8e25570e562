package resiliencehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// The context an attempt sends its request under lives until the exchange
// is over, and no longer: once the caller has closed the body it got (or at
// once, for a response without a body, or a failure's body read whole),
// the Base's request context is done, so a Base that ties resources to it
// (net/http's transport does) frees them. Nothing else ends it here: the
// request's own context lives on, and there is no Policy to cancel an
// attempt's.
func TestAttemptContextEndsWithTheExchange(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   func() io.ReadCloser // nil: http.NoBody
		length int64
		read   bool // the caller reads the body to its end before closing it
	}{
		{"failure without a body", http.StatusServiceUnavailable, nil, 0, false},
		{"failure with a short body", http.StatusServiceUnavailable, text("try later"), -1, false},
		{"failure with a body longer than what is buffered", http.StatusServiceUnavailable, text(strings.Repeat("x", 100<<10)), -1, false},
		{"success without a body", http.StatusOK, nil, 0, false},
		{"success with a body, closed unread", http.StatusOK, text("payload"), -1, false},
		{"success with a body, read to its end", http.StatusOK, text("payload"), -1, true},
		{"success with an empty body of the Base's own", http.StatusNoContent, text(""), -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sent context.Context
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent = r.Context()
				var b io.ReadCloser = http.NoBody
				if tt.body != nil {
					b = tt.body()
				}
				return &http.Response{StatusCode: tt.status, Header: http.Header{}, ContentLength: tt.length, Request: r, Body: b}, nil
			})
			req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, "http://dependency.test/", nil)
			resp, err := (&resiliencehttp.Transport{Base: base}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if tt.read {
				if _, err := io.ReadAll(resp.Body); err != nil {
					t.Fatalf("reading the body: %v", err)
				}
			}
			if err := resp.Body.Close(); err != nil {
				t.Fatalf("closing the body: %v", err)
			}
			if sent.Err() == nil {
				t.Error("the attempt's request context lives on after the exchange ended")
			}
			if req.Context().Err() != nil {
				t.Error("the request's own context ended")
			}
		})
	}
}

func text(s string) func() io.ReadCloser {
	return func() io.ReadCloser { return io.NopCloser(strings.NewReader(s)) }
}

// An attempt that gets no response (the Base's error) ends its request
// context before it returns the error.
func TestAttemptContextEndsWithATransportError(t *testing.T) {
	var sent context.Context
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r.Context()
		return nil, errors.New("connection refused")
	})
	req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, "http://dependency.test/", nil)
	if _, err := (&resiliencehttp.Transport{Base: base}).RoundTrip(req); err == nil {
		t.Fatal("RoundTrip succeeded, want the Base's error")
	}
	if sent.Err() == nil {
		t.Error("the attempt's request context lives on after the attempt failed")
	}
}
