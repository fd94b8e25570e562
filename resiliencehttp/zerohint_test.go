package resiliencehttp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// zeroHint is a refusal whose hint is 0: "retry now".
type zeroHint struct{}

func (zeroHint) Error() string             { return "refused, retry now" }
func (zeroHint) RetryAfter() time.Duration { return 0 }
func (zeroHint) Is(target error) bool      { return target == resilience.ErrRefused }

// A refusal whose hint is 0 is answered with Retry-After: 1, as one with
// no hint: the answer never asks a client to come back at once.
func TestMiddlewareRetryAfterOfAZeroHintIsOneSecond(t *testing.T) {
	if d, ok := resilience.RetryAfter(zeroHint{}); !ok || d != 0 {
		t.Fatalf("resilience.RetryAfter(zeroHint) = %v, %v; want 0, true", d, ok)
	}
	refuse := resilience.New("refuse", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
		return struct{}{}, zeroHint{}
	})
	resp := get(t, resiliencehttp.Middleware(refuse)(http.HandlerFunc(ok)))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("refused with a hint of 0: %d Retry-After %q, want 503 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
