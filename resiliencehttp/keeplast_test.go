package resiliencehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// An attempt that finds the Transport's Bulkhead full closes the last
// failure response of its request only if that response holds a slot (a
// body too long to read whole), and then takes that slot. A failure read
// whole holds none: it is kept open, and when the attempt is refused the
// caller still gets it.
func TestAttemptFindingTheBulkheadFullClosesOnlyAFailureThatHoldsASlot(t *testing.T) {
	for _, tt := range []struct {
		name        string
		body        string
		wantSecond  error // the second attempt's error: the refusal, or the Base's 503
		wantClosed  bool  // the first response's body was closed by the second attempt
		wantAnswers int   // requests the Base answered
	}{
		{"failure read whole", "try later", bulkhead.ErrFull, false, 1},
		{"failure too long to read whole", strings.Repeat("x", 100<<10), &resiliencehttp.StatusError{StatusCode: 503}, true, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bh := bulkhead.New(1)
			var bodies []*trackedBody
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				b := &trackedBody{ReadCloser: text(tt.body)()}
				bodies = append(bodies, b)
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, ContentLength: -1, Request: r, Body: b}, nil
			})
			// Two attempts; between them, another exchange takes the
			// slot the first one gave back (if it did).
			var second error
			closedBefore := false
			twice := resilience.New("twice", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
				next.Call(ctx)
				taken := bh.TryAcquire()
				closedBefore = bodies[0].closed.Load()
				resp, err := next.Call(ctx)
				second = err
				if taken {
					bh.Release()
				}
				return resp, err
			})
			req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, "http://dependency.test/", nil)
			resp, err := (&resiliencehttp.Transport{Base: base, Policy: twice, Bulkhead: bh}).RoundTrip(req)
			if err != nil {
				t.Fatalf("RoundTrip: %v, want a 503", err)
			}
			got := readAll(t, resp)
			var se *resiliencehttp.StatusError
			switch want := tt.wantSecond.(type) {
			case *resiliencehttp.StatusError:
				if !errors.As(second, &se) || se.StatusCode != want.StatusCode {
					t.Errorf("second attempt: %v, want a %d StatusError", second, want.StatusCode)
				}
			default:
				if !errors.Is(second, want) {
					t.Errorf("second attempt: %v, want %v", second, want)
				}
			}
			if closed := !closedBefore && bodies[0].closed.Load() && len(bodies) > 1; closed != tt.wantClosed {
				t.Errorf("the second attempt closed the first response: %v, want %v", closed, tt.wantClosed)
			}
			if len(bodies) != tt.wantAnswers {
				t.Errorf("the Base answered %d requests, want %d", len(bodies), tt.wantAnswers)
			}
			if resp.StatusCode != http.StatusServiceUnavailable || got != tt.body {
				t.Errorf("got %d %.20q, want the last 503 whole", resp.StatusCode, got)
			}
			if n := bh.InFlight(); n != 0 {
				t.Errorf("InFlight = %d at the end, want 0", n)
			}
		})
	}
}

// The failure an attempt closed to take its slot is forgotten: if that
// attempt then gets no response, the caller gets its error, not the
// closed response.
func TestFailureClosedForItsSlotIsNotReturned(t *testing.T) {
	bh := bulkhead.New(1)
	n := 0
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if n++; n > 1 {
			return nil, errors.New("connection reset by peer")
		}
		return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, ContentLength: -1, Request: r,
			Body: text(strings.Repeat("x", 100<<10))()}, nil
	})
	req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, "http://dependency.test/", nil)
	resp, err := (&resiliencehttp.Transport{Base: base, Policy: noWait(2), Bulkhead: bh}).RoundTrip(req)
	if err == nil {
		body, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("RoundTrip returned %d (%d bytes of body, %v), want the second attempt's error", resp.StatusCode, len(body), rerr)
	}
	if !strings.Contains(err.Error(), "connection reset by peer") {
		t.Errorf("RoundTrip: %v, want the second attempt's error", err)
	}
	if n := bh.InFlight(); n != 0 {
		t.Errorf("InFlight = %d at the end, want 0", n)
	}
}
