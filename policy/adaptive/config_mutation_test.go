package adaptive_test

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
)

// The bounds Config.Validate states are inclusive: a field at its bound is
// valid, and New takes it; just past it, both refuse it.
func TestValidateAcceptsEachBound(t *testing.T) {
	tests := []struct {
		name string
		c    adaptive.Config
		want string // Validate's error, "" for none
	}{
		{"the longest Window", adaptive.Config{Window: math.MaxInt64 / 10}, ""},
		{"the shortest MaxWait with a queue", adaptive.Config{MaxWait: time.Nanosecond, MaxQueue: 1}, ""},
		{"the shortest MaxWait without a queue", adaptive.Config{MaxWait: time.Nanosecond},
			"adaptive: MaxWait needs a queue (MaxQueue >= 1), got MaxQueue 0"},
	}
	for _, tt := range tests {
		got := ""
		if err := tt.c.Validate(); err != nil {
			got = err.Error()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Validate() mismatch (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.want, panicOf(func() { adaptive.New(adaptive.WithConfig(tt.c)) })); diff != "" {
			t.Errorf("%s: New panic mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// Each option takes the smallest and the largest value its doc allows, and
// New builds a limiter from it; the options that check their argument
// panic naming themselves on the values their docs rule out.
func TestOptionsAcceptTheirBounds(t *testing.T) {
	for name, o := range map[string]func() adaptive.Option{
		"WithMinLimit(2097151)":      func() adaptive.Option { return adaptive.WithMinLimit(2097151) },
		"WithMaxLimit(2097151)":      func() adaptive.Option { return adaptive.WithMaxLimit(2097151) },
		"WithMinLimit(1)":            func() adaptive.Option { return adaptive.WithMinLimit(1) },
		"WithMaxLimit(1)":            func() adaptive.Option { return adaptive.WithMaxLimit(1) },
		"WithInitial(1)":             func() adaptive.Option { return adaptive.WithInitial(1) },
		"WithWindowDuration(1ns)":    func() adaptive.Option { return adaptive.WithWindowDuration(time.Nanosecond) },
		"WithWindowCalls(1)":         func() adaptive.Option { return adaptive.WithWindowCalls(1) },
		"WithMaxLatency(1ns)":        func() adaptive.Option { return adaptive.WithMaxLatency(time.Nanosecond) },
		"WithBaselineMemory(1ns)":    func() adaptive.Option { return adaptive.WithBaselineMemory(time.Nanosecond) },
		"WithMaxWait(1ns)":           func() adaptive.Option { return adaptive.WithMaxWait(time.Nanosecond) },
		"WithName(\"db\")":           func() adaptive.Option { return adaptive.WithName("db") },
		"WithClock(clock.NewFake())": func() adaptive.Option { return adaptive.WithClock(clock.NewFake()) },
	} {
		if diff := cmp.Diff("", panicOf(func() { adaptive.New(o(), adaptive.WithMaxQueue(1)) })); diff != "" {
			t.Errorf("%s: panic mismatch (-want +got):\n%s", name, diff)
		}
	}
	for _, tt := range []struct {
		f    func()
		want string
	}{
		{func() { adaptive.WithMinLimit(2097152) }, "adaptive: WithMinLimit(2097152): the bound must be between 1 and 2097151; leave the option out for the default, 1"},
		{func() { adaptive.WithName("db\xff") }, `adaptive: WithName("db\xff"): name must be valid UTF-8`},
		{func() { adaptive.WithClock(nil) }, "adaptive: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"},
	} {
		if diff := cmp.Diff(tt.want, panicOf(tt.f)); diff != "" {
			t.Errorf("panic mismatch (-want +got):\n%s", diff)
		}
	}
}
