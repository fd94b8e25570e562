package resiliencehttp_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// The StatusError of a failure carries its Retry-After: none without the
// header; an HTTP date relative to the response's Date header, or to now
// when the response has none (a Base of one's own need not set it).
func TestStatusErrorAfterOfAResponse(t *testing.T) {
	date := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	// Whole seconds, as HTTP dates are: the wait relative to now is within
	// a second of 31s, less the time the test takes.
	later := time.Now().Add(32 * time.Second).Truncate(time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name     string
		header   http.Header
		min, max time.Duration
	}{
		{"no Retry-After", http.Header{}, 0, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second, 7 * time.Second},
		{"a date after the response's Date", http.Header{"Date": {date.Format(http.TimeFormat)}, "Retry-After": {date.Add(3 * time.Second).Format(http.TimeFormat)}},
			3 * time.Second, 3 * time.Second},
		{"a date, no Date header", http.Header{"Retry-After": {later}}, 20 * time.Second, 32 * time.Second},
		{"a date, a Date header that does not parse", http.Header{"Date": {"yesterday"}, "Retry-After": {later}}, 20 * time.Second, 32 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: tt.header, Body: http.NoBody, Request: r}, nil
			})
			var seen error
			spy := resilience.New("spy", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
				resp, err := next.Call(ctx)
				seen = err
				return resp, err
			})
			req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, "http://dependency.test/", nil)
			resp, err := (&resiliencehttp.Transport{Base: base, Policy: spy}).RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			var se *resiliencehttp.StatusError
			if !errors.As(seen, &se) {
				t.Fatalf("the policy saw %v, want a *StatusError", seen)
			}
			if se.After < tt.min || se.After > tt.max {
				t.Errorf("After = %v, want within [%v, %v]", se.After, tt.min, tt.max)
			}
		})
	}
}
