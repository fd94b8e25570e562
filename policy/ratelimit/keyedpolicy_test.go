package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
)

type tenantKey struct{}

func tenant(ctx context.Context) string { s, _ := ctx.Value(tenantKey{}).(string); return s }

// KeyedPolicy takes each call's token from its key's bucket: one key's
// refusals leave another's calls alone, and a refusal carries the wait for
// its own bucket's next token.
func TestKeyedPolicyKeysEachCall(t *testing.T) {
	fake := clock.NewFake()
	k := ratelimit.NewKeyed[string](ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake), ratelimit.WithName("tenants"))
	p := ratelimit.KeyedPolicy[string](k, tenant)
	if got := p.String(); got != "ratelimit(tenants)" {
		t.Errorf("layer %q, want ratelimit(tenants)", got)
	}
	calls := 0
	op := func(context.Context) (string, error) { calls++; return "ok", nil }
	a := context.WithValue(t.Context(), tenantKey{}, "a")
	b := context.WithValue(t.Context(), tenantKey{}, "b")
	if _, err := p.Do(a, op); err != nil {
		t.Fatalf("a's first call: %v", err)
	}
	fake.Advance(250 * time.Millisecond)
	_, err := p.Do(a, op)
	checkLimited(t, err, "tenants", 750*time.Millisecond)
	if _, err := p.Do(b, op); err != nil {
		t.Fatalf("b's first call, after a's refusal: %v", err)
	}
	if calls != 2 {
		t.Errorf("the op ran %d times, want 2", calls)
	}
	// A caller that has gone takes no token and is not keyed.
	done, cancel := context.WithCancel(context.WithValue(t.Context(), tenantKey{}, "c"))
	cancel()
	if _, err := p.Do(done, op); !errors.Is(err, context.Canceled) || k.Len() != 2 {
		t.Errorf("Do on a done context = %v with %d keys tracked; want context.Canceled and 2", err, k.Len())
	}
}

// Its layer is a rate limiter that does not wait, for resilience's Check:
// outside a retry, it is reported.
func TestKeyedPolicyDescribed(t *testing.T) {
	k := ratelimit.NewKeyed[string](10, 1)
	p := resilience.Then(ratelimit.KeyedPolicy[int](k, tenant), retry.New[int]())
	if fs := p.Check(); len(fs) != 1 || fs[0].Code != resilience.RateLimitOutsideRetry {
		t.Errorf("Check(%s) = %v, want one %s", p, fs, resilience.RateLimitOutsideRetry)
	}
}

func TestKeyedPolicyPanics(t *testing.T) {
	k := ratelimit.NewKeyed[string](10, 1)
	for _, tt := range []struct {
		want string
		f    func()
	}{
		{"ratelimit: KeyedPolicy Keyed must not be nil", func() { ratelimit.KeyedPolicy[int, string](nil, tenant) }},
		{"ratelimit: KeyedPolicy key must not be nil", func() { ratelimit.KeyedPolicy[int, string](k, nil) }},
	} {
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			tt.f()
			return ""
		}()
		if got != tt.want {
			t.Errorf("panic %q, want %q", got, tt.want)
		}
	}
}
