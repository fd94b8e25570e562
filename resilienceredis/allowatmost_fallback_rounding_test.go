package resilienceredis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// When the fallback decides, AllowAtMost takes what the local bucket
// holds and says how many it took. A bucket that holds a hair under one
// token reads one in Tokens() (a float64 rounds 1e18-50 ns of refill, at
// one event per 1e18 ns, to a whole token; see "Precision" in
// policy/ratelimit), and its AllowN(1) refuses every time: AllowAtMost
// must then take nothing and refuse, not report a token it did not take.
// In a synctest bubble the bucket's clock does not move between tries.
func TestAllowAtMostFallbackHairUnderAToken(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		ctx := context.Background()
		l := NewLimiter(&scriptedRedis{}, "hair", 1e-9, 1) // one event per 1e18 ns
		l.Close()                                          // every decision is the fallback's
		if k, err := l.AllowAtMost(ctx, 1); k != 1 || err != nil {
			t.Fatalf("AllowAtMost on the full fallback = %d, %v; want 1, nil", k, err)
		}
		time.Sleep(1e18 - 50) // 50ns short of the next token
		k, err := l.AllowAtMost(ctx, 1)
		if k != 0 || !errors.Is(err, ratelimit.ErrLimited) {
			t.Errorf("AllowAtMost 50ns short of a token = %d, %v; want 0 and a refusal", k, err)
		}
		time.Sleep(50 * time.Nanosecond)
		if k, err := l.AllowAtMost(ctx, 1); k != 1 || err != nil {
			t.Errorf("AllowAtMost once the token is there = %d, %v; want 1, nil", k, err)
		}
	})
}
