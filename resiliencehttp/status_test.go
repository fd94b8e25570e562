package resiliencehttp_test

import (
	"errors"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"net/http"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		value  string
		want   time.Duration
		wantOK bool
	}{
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 5 ", 5 * time.Second, true},
		{"Sun, 29 Nov 2026 12:00:30 GMT", 30 * time.Second, true}, // IMF-fixdate
		{"Sunday, 29-Nov-26 12:01:00 GMT", time.Minute, true},     // RFC 850
		{"Sun Nov 29 12:00:10 2026", 10 * time.Second, true},      // asctime
		{"Sun, 29 Nov 2026 11:00:00 GMT", 0, true},                // in the past
		{"99999999999999999999", time.Duration(1<<63 - 1), true},  // saturates
		{"9223372036854775807", time.Duration(1<<63 - 1), true},   // saturates
		{"9223372036", 9223372036 * time.Second, true},            // the most whole seconds a Duration holds
		{"9223372037", time.Duration(1<<63 - 1), true},            // one more saturates
		{"", 0, false},
		{"-1", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, ok := resiliencehttp.ParseRetryAfter(tt.value, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.value, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestStatusError(t *testing.T) {
	e := &resiliencehttp.StatusError{StatusCode: 503, Status: "503 Service Unavailable", After: 2 * time.Second}
	if got, want := e.Error(), "resiliencehttp: 503 Service Unavailable (retry after 2s)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if d, ok := resilience.RetryAfter(e); d != 2*time.Second || !ok {
		t.Errorf("resilience.RetryAfter = %v, %v; want 2s, true", d, ok)
	}
	if got, want := (&resiliencehttp.StatusError{StatusCode: 429}).Error(), "resiliencehttp: 429 Too Many Requests"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	// The least wait there is, a nanosecond, is a hint still.
	tiny := &resiliencehttp.StatusError{StatusCode: 503, Status: "503 Service Unavailable", After: time.Nanosecond}
	if got, want := tiny.Error(), "resiliencehttp: 503 Service Unavailable (retry after 1ns)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := tiny.RetryAfter(); got != time.Nanosecond {
		t.Errorf("RetryAfter() = %v, want 1ns", got)
	}
	// The response's own reason phrase, when it has one.
	if got, want := (&resiliencehttp.StatusError{StatusCode: 503, Status: "503 Slow Down"}).Error(), "resiliencehttp: 503 Slow Down"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

func TestIsFailure(t *testing.T) {
	for code := 100; code <= 599; code++ {
		want := code == 429 || (code >= 500 && code != 501)
		if got := resiliencehttp.IsFailure(&http.Response{StatusCode: code}); got != want {
			t.Errorf("IsFailure(%d) = %v, want %v", code, got, want)
		}
	}
}

// Regression: a 503 without Retry-After reported a hint of 0, which in an
// error tree shadowed a guard's real hint beside it.
func TestStatusErrorWithoutHeaderHasNoHint(t *testing.T) {
	refusal := resilience.Refuse(breaker.ErrOpen, "db", 30*time.Second)
	err := errors.Join(&resiliencehttp.StatusError{StatusCode: 503}, refusal)
	if d, ok := resilience.RetryAfter(err); d != 30*time.Second || !ok {
		t.Errorf("RetryAfter = %v, %v; want the breaker's 30s, true", d, ok)
	}
}
