package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// Policy and KeyedPolicy refuse at once: a token one nanosecond away is
// not waited for, and the refusal says so.
func TestPolicyRefusesATokenANanosecondAway(t *testing.T) {
	op := func(context.Context) (int, error) { return 1, nil }
	l := ratelimit.New(1e9, 1, ratelimit.WithClock(clock.NewFake()))
	k := ratelimit.NewKeyed[string](1e9, 1, ratelimit.WithClock(clock.NewFake()))
	key := func(context.Context) string { return "a" }
	for name, p := range map[string]resilience.Policy[int]{
		"Policy":      ratelimit.Policy[int](l),
		"KeyedPolicy": ratelimit.KeyedPolicy[int](k, key),
	} {
		if _, err := p.Do(context.Background(), op); err != nil {
			t.Fatalf("%s: first call: %v", name, err)
		}
		_, err := p.Do(context.Background(), op) // the next token is 1ns away
		t.Run(name, func(t *testing.T) { checkLimited(t, err, "", time.Nanosecond) })
	}
}
