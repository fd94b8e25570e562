package ratelimit_test

import (
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

func TestValidate(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		c    ratelimit.Config
		want string
	}{
		{"valid", ratelimit.Config{Rate: 10, Burst: 1}, ""},
		{"zero rate", ratelimit.Config{Rate: 0, Burst: 5}, ""},
		{"one per ns", ratelimit.Config{Rate: 1e9, Burst: 1}, ""},
		{"inf, no burst", ratelimit.Config{Rate: inf}, ""},
		{"largest burst", ratelimit.Config{Rate: 1, Burst: 1 << 52}, ""},
		{"all options", ratelimit.Config{Rate: 1, Burst: 1, MaxWait: time.Second, MaxKeys: 3, Name: "api", Clock: clock.NewFake()}, ""},
		{"NaN", ratelimit.Config{Rate: math.NaN(), Burst: 1},
			"ratelimit: Rate must be a number of events per second, got NaN"},
		{"negative rate", ratelimit.Config{Rate: -1, Burst: 1},
			"ratelimit: Rate must be >= 0 events per second, got -1"},
		{"-Inf", ratelimit.Config{Rate: math.Inf(-1), Burst: 1},
			"ratelimit: Rate must be >= 0 events per second, got -Inf"},
		{"too fast", ratelimit.Config{Rate: 2e9, Burst: 1},
			"ratelimit: Rate must be at most 1e9 events per second (one per nanosecond) or +Inf, got 2e+09"},
		{"no burst", ratelimit.Config{Rate: 10},
			"ratelimit: Burst must be >= 1 with a finite Rate, got 0"},
		{"negative burst", ratelimit.Config{Rate: 10, Burst: -2},
			"ratelimit: Burst must be >= 1 with a finite Rate, got -2"},
		{"negative burst, inf", ratelimit.Config{Rate: inf, Burst: -2},
			"ratelimit: Burst must be >= 0, got -2"},
		{"huge burst", ratelimit.Config{Rate: 1, Burst: 1<<52 + 1},
			"ratelimit: Burst must be at most 4503599627370496 (1<<52), got 4503599627370497"},
		{"negative wait", ratelimit.Config{Rate: 1, Burst: 1, MaxWait: -time.Second},
			"ratelimit: MaxWait must be >= 0, got -1s"},
		{"negative keys", ratelimit.Config{Rate: 1, Burst: 1, MaxKeys: -1},
			"ratelimit: MaxKeys must be >= 0 (0 means 8192), got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.c.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate() = %q, want %q", got, tt.want)
			}
			for _, build := range []struct {
				name string
				f    func()
			}{
				{"New", func() { ratelimit.New(tt.c.Rate, tt.c.Burst, ratelimit.WithConfig(tt.c)) }},
				{"New args", func() {
					ratelimit.New(tt.c.Rate, tt.c.Burst, ratelimit.WithMaxWait(tt.c.MaxWait), ratelimit.WithMaxKeys(tt.c.MaxKeys))
				}},
				{"NewKeyed", func() { ratelimit.NewKeyed[string](0, 1, ratelimit.WithConfig(tt.c)) }},
			} {
				func() {
					defer func() {
						r := recover()
						if tt.want == "" && r != nil || tt.want != "" && r != tt.want {
							t.Fatalf("%s panicked with %v, want %q", build.name, r, tt.want)
						}
					}()
					build.f()
				}()
			}
		})
	}
}

func TestEvery(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want float64
	}{
		{time.Second, 1},
		{100 * time.Millisecond, 10},
		{time.Nanosecond, 1e9},
		{time.Minute, 1.0 / 60},
		{0, math.Inf(1)},
	}
	for _, tt := range tests {
		if got := ratelimit.Every(tt.d); got != tt.want {
			t.Errorf("Every(%v) = %v, want %v", tt.d, got, tt.want)
		}
	}
	defer func() {
		if r := recover(); r != "ratelimit: Every interval must be >= 0, got -1s" {
			t.Fatalf("Every(-1s) panicked with %v", r)
		}
	}()
	ratelimit.Every(-time.Second)
}

func TestOptionsApplyInOrder(t *testing.T) {
	base := ratelimit.Config{Rate: 1, Burst: 1, Name: "cfg"}
	tests := []struct {
		name string
		opts []ratelimit.Option
		want string // the policy's layer name
	}{
		{"name", []ratelimit.Option{ratelimit.WithName("a"), ratelimit.WithName("b")}, "ratelimit(b)"},
		{"config then option", []ratelimit.Option{ratelimit.WithConfig(base), ratelimit.WithName("late")}, "ratelimit(late)"},
		{"option then config", []ratelimit.Option{ratelimit.WithName("early"), ratelimit.WithConfig(base)}, "ratelimit(cfg)"},
		{"unnamed", nil, "ratelimit"},
	}
	for _, tt := range tests {
		l := ratelimit.New(1, 1, tt.opts...)
		if got := ratelimit.Policy[int](l).String(); got != tt.want {
			t.Errorf("%s: layer %q, want %q", tt.name, got, tt.want)
		}
	}
}

// WithConfig replaces Rate and Burst too.
func TestWithConfigSetsRateAndBurst(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(1, 1, ratelimit.WithConfig(ratelimit.Config{Rate: 0, Burst: 3, Clock: fake}))
	if got := admitted(l, 10); got != 3 {
		t.Fatalf("admitted %d of 10, want the burst of 3", got)
	}
	fake.Advance(time.Hour) // rate 0: no refill
	if l.Allow() {
		t.Fatal("a rate-0 limiter refilled")
	}
}

// admitted calls Allow n times and counts the trues.
func admitted(l *ratelimit.Limiter, n int) int {
	k := 0
	for range n {
		if l.Allow() {
			k++
		}
	}
	return k
}
