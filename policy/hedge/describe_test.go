package hedge_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/hedge"
)

// A hedge describes itself for Check and Bounds: 1+MaxHedges attempts, a
// fixed Delay or a quantile delay bounded by its MaxDelay (else Off), a
// MaxWait of 0 read as the Delay, and whether a budget bounds its hedges.
func TestLayerDescription(t *testing.T) {
	const d = 100 * time.Millisecond
	off := time.Duration(resilience.Off)
	for _, tc := range []struct {
		name string
		p    resilience.Policy[int]
		want resilience.Layer
	}{
		{"defaults", hedge.New[int](d),
			resilience.Layer{Name: "hedge(100ms)", Kind: resilience.KindHedge, Attempts: 2, Delay: d, MaxWait: d}},
		{"max hedges and max wait", hedge.New[int](d, hedge.WithMaxHedges(3), hedge.WithMaxWait(time.Second)),
			resilience.Layer{Name: "hedge(100ms)", Kind: resilience.KindHedge, Attempts: 4, Delay: d, MaxWait: time.Second}},
		{"max wait of 1ns", hedge.New[int](d, hedge.WithMaxWait(time.Nanosecond)),
			resilience.Layer{Name: "hedge(100ms)", Kind: resilience.KindHedge, Attempts: 2, Delay: d, MaxWait: time.Nanosecond}},
		{"no max wait", hedge.New[int](d, hedge.WithMaxWait(off)),
			resilience.Layer{Name: "hedge(100ms)", Kind: resilience.KindHedge, Attempts: 2, Delay: d, MaxWait: off}},
		{"quantile, no max delay", hedge.New[int](d, hedge.WithQuantile(0.95)),
			resilience.Layer{Name: "hedge(p95)", Kind: resilience.KindHedge, Attempts: 2, Delay: off, MaxWait: d}},
		{"quantile and max delay", hedge.New[int](d, hedge.WithQuantile(0.95), hedge.WithMaxDelay(2*time.Second)),
			resilience.Layer{Name: "hedge(p95)", Kind: resilience.KindHedge, Attempts: 2, Delay: 2 * time.Second, MaxWait: d}},
		{"quantile and max delay of 1ns", hedge.New[int](d, hedge.WithQuantile(0.5), hedge.WithMaxDelay(time.Nanosecond)),
			resilience.Layer{Name: "hedge(p50)", Kind: resilience.KindHedge, Attempts: 2, Delay: time.Nanosecond, MaxWait: d}},
		{"budget", hedge.New[int](d, hedge.WithBudget(0.1)),
			resilience.Layer{Name: "hedge(100ms)", Kind: resilience.KindHedge, Attempts: 2, Delay: d, MaxWait: d, Budget: true}},
	} {
		if diff := cmp.Diff([]resilience.Layer{tc.want}, tc.p.Layers()); diff != "" {
			t.Errorf("%s: Layers mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}
