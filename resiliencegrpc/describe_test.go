package resiliencegrpc_test

import (
	"context"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencegrpc"
)

// KeyedLimit's layer is a rate limiter for resilience's Check: outside a
// retry, it is reported.
func TestKeyedLimitDescribed(t *testing.T) {
	k := ratelimit.NewKeyed[string](10, 1)
	lim := resiliencegrpc.KeyedLimit[int](k, func(context.Context) string { return "" })
	p := resilience.Then(lim, retry.New[int]())
	fs := p.Check()
	if len(fs) != 1 || fs[0].Code != resilience.RateLimitOutsideRetry {
		t.Errorf("Check(%s) = %v, want one %s", p, fs, resilience.RateLimitOutsideRetry)
	}
}
