package adaptive_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// The policy's layer describes a concurrency limit, as a bulkhead's does,
// for resilience's Check and Bounds: its longest wait is 0 with no queue,
// MaxWait with a queue and a MaxWait, and no bound (Off) with a queue and
// no MaxWait.
func TestPolicyDescribesItsLongestWait(t *testing.T) {
	tests := []struct {
		name string
		opts []adaptive.Option
		want time.Duration
	}{
		{"no queue", nil, 0},
		{"a queue and a MaxWait", []adaptive.Option{adaptive.WithMaxQueue(1), adaptive.WithMaxWait(time.Nanosecond)}, time.Nanosecond},
		{"a queue and a longer MaxWait", []adaptive.Option{adaptive.WithMaxQueue(4), adaptive.WithMaxWait(250 * time.Millisecond)}, 250 * time.Millisecond},
		{"a queue, no MaxWait", []adaptive.Option{adaptive.WithMaxQueue(1)}, resilience.Off},
	}
	for _, tt := range tests {
		got := adaptive.Policy[int](adaptive.New(tt.opts...)).Layers()
		want := []resilience.Layer{{Name: "adaptive", Kind: resilience.KindBulkhead, MaxWait: tt.want}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Layers mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}
