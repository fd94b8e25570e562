package bulkhead_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
)

func TestValidate(t *testing.T) {
	ok := bulkhead.Config{MaxConcurrent: 1}
	tests := []struct {
		name   string
		mutate func(*bulkhead.Config)
		want   string
	}{
		{"valid", func(*bulkhead.Config) {}, ""},
		{"valid with queue and wait", func(c *bulkhead.Config) { c.MaxQueue, c.MaxWait = 3, time.Second }, ""},
		{"largest", func(c *bulkhead.Config) { c.MaxConcurrent, c.MaxQueue = 1<<31-1, 1<<31-1 }, ""},
		{"zero slots", func(c *bulkhead.Config) { c.MaxConcurrent = 0 },
			"bulkhead: MaxConcurrent must be between 1 and 2147483647, got 0"},
		{"negative slots", func(c *bulkhead.Config) { c.MaxConcurrent = -3 },
			"bulkhead: MaxConcurrent must be between 1 and 2147483647, got -3"},
		{"too many slots", func(c *bulkhead.Config) { c.MaxConcurrent = 1 << 31 },
			"bulkhead: MaxConcurrent must be between 1 and 2147483647, got 2147483648"},
		{"negative queue", func(c *bulkhead.Config) { c.MaxQueue = -1 },
			"bulkhead: MaxQueue must be between 0 and 2147483647, got -1"},
		{"queue too long", func(c *bulkhead.Config) { c.MaxQueue = 1 << 31 },
			"bulkhead: MaxQueue must be between 0 and 2147483647, got 2147483648"},
		{"negative wait", func(c *bulkhead.Config) { c.MaxQueue, c.MaxWait = 1, -time.Second },
			"bulkhead: MaxWait must be >= 0, got -1s"},
		{"wait without queue", func(c *bulkhead.Config) { c.MaxWait = time.Second },
			"bulkhead: MaxWait needs a queue (MaxQueue >= 1), got MaxQueue 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.mutate(&c)
			got := ""
			if err := c.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate() = %q, want %q", got, tt.want)
			}
			// New panics with the same message.
			defer func() {
				r := recover()
				if tt.want == "" && r != nil || tt.want != "" && r != tt.want {
					t.Fatalf("New panicked with %v, want %q", r, tt.want)
				}
			}()
			bulkhead.New(c.MaxConcurrent, bulkhead.WithConfig(c))
		})
	}
}

func TestOptionsApplyInOrder(t *testing.T) {
	fake := clock.NewFake()
	base := bulkhead.Config{MaxConcurrent: 2, MaxQueue: 7, MaxWait: time.Minute, Name: "cfg", Clock: fake}
	tests := []struct {
		name string
		opts []bulkhead.Option
		want string // refusal after the first two slots are taken
	}{
		{"name", []bulkhead.Option{bulkhead.WithName("a"), bulkhead.WithName("b")}, "bulkhead: full (b)"},
		{"config then option", []bulkhead.Option{bulkhead.WithConfig(base), bulkhead.WithName("late"), bulkhead.WithMaxQueue(0), bulkhead.WithMaxWait(0)},
			"bulkhead: full (late)"},
		{"option then config", []bulkhead.Option{bulkhead.WithName("early"), bulkhead.WithConfig(base), bulkhead.WithMaxQueue(0), bulkhead.WithMaxWait(0)},
			"bulkhead: full (cfg)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bulkhead.New(2, tt.opts...)
			if first, second := b.TryAcquire(), b.TryAcquire(); !first || !second {
				t.Fatal("could not take 2 slots")
			}
			err := b.Acquire(t.Context())
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Fatalf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// WithConfig replaces MaxConcurrent too.
func TestWithConfigSetsMaxConcurrent(t *testing.T) {
	b := bulkhead.New(1, bulkhead.WithConfig(bulkhead.Config{MaxConcurrent: 3}))
	n := 0
	for b.TryAcquire() {
		n++
	}
	if n != 3 {
		t.Fatalf("took %d slots, want 3", n)
	}
}
