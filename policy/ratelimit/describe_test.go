package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// Each layer describes itself for Check and Bounds: Policy and KeyedPolicy
// never wait (MaxWait 0); WaitPolicy waits up to the limiter's MaxWait, or
// with no bound (Off) when it has none.
func TestLayerDescription(t *testing.T) {
	off := time.Duration(resilience.Off)
	plain := ratelimit.New(10, 1, ratelimit.WithName("api"))
	capped := ratelimit.New(10, 1, ratelimit.WithName("api"), ratelimit.WithMaxWait(time.Nanosecond))
	keyed := ratelimit.NewKeyed[string](10, 1, ratelimit.WithName("api"), ratelimit.WithMaxWait(time.Second))
	key := func(context.Context) string { return "" }
	for _, tc := range []struct {
		name string
		p    resilience.Policy[int]
		want resilience.Layer
	}{
		{"Policy", ratelimit.Policy[int](capped), resilience.Layer{Name: "ratelimit(api)", Kind: resilience.KindRateLimit}},
		{"KeyedPolicy", ratelimit.KeyedPolicy[int](keyed, key), resilience.Layer{Name: "ratelimit(api)", Kind: resilience.KindRateLimit}},
		{"WaitPolicy, no MaxWait", ratelimit.WaitPolicy[int](plain), resilience.Layer{Name: "ratelimit(api)", Kind: resilience.KindRateLimit, MaxWait: off}},
		{"WaitPolicy, MaxWait 1ns", ratelimit.WaitPolicy[int](capped), resilience.Layer{Name: "ratelimit(api)", Kind: resilience.KindRateLimit, MaxWait: time.Nanosecond}},
	} {
		if diff := cmp.Diff([]resilience.Layer{tc.want}, tc.p.Layers()); diff != "" {
			t.Errorf("%s: Layers mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}
