package breaker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// Validate at the smallest values of the fields it relates: a rule that
// holds for 10 holds for 1 (a window of one call, a duration of 1ns, one
// bucket, a backoff whose Max is 1ns).
func TestValidateAtTheSmallestValues(t *testing.T) {
	for _, c := range []struct {
		cfg  breaker.Config
		want string // "" valid
	}{
		{breaker.Config{WindowCalls: 1, WindowDuration: time.Minute}, "breaker: WindowCalls and WindowDuration are exclusive, got 1 and 1m0s"},
		{breaker.Config{WindowCalls: 10, WindowDuration: 1, WindowBuckets: 1}, "breaker: WindowCalls and WindowDuration are exclusive, got 10 and 1ns"},
		{breaker.Config{WindowBuckets: 1}, "breaker: WindowBuckets needs WindowDuration, got 1 buckets and 0s"},
		{breaker.Config{WindowDuration: 1}, "breaker: WindowDuration must be at least 1ns per bucket (WindowBuckets 0: the default 10), got 1ns"},
		{breaker.Config{WindowCalls: 1, MinCalls: 2}, "breaker: MinCalls must be <= WindowCalls (1), got 2"},
		{breaker.Config{Cooldown: 1, CooldownBackoff: backoff.Constant(time.Second)}, "breaker: Cooldown and CooldownBackoff are exclusive, got 1ns and constant(1s)"},
		{breaker.Config{CooldownBackoff: backoff.Constant(1)}, ""},
		{breaker.Config{WindowDuration: 1, WindowBuckets: 1}, ""},
		{breaker.Config{WindowCalls: 1, MinCalls: 1}, ""},
	} {
		err := c.cfg.Validate()
		if c.want == "" {
			if err != nil {
				t.Errorf("Validate(%+v) = %v, want nil", c.cfg, err)
			}
			continue
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("Validate(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}

// A WithConfig that sets a time-based window of 1ns clears a count-based
// window set before it, as any later source of the pair does.
func TestWithConfigOfTheShortestTimeWindowClearsTheCountWindow(t *testing.T) {
	b, f := newFake(breaker.WithWindowCalls(10), breaker.WithFailureRatio(0.5),
		breaker.WithConfig(breaker.Config{WindowDuration: 1, WindowBuckets: 1}))
	succeed(t, b, f, 2)
	f.Advance(1)
	wantCounts(t, b, breaker.Counts{ConsecutiveSuccesses: 2}) // the 1ns window has moved on
}

// WithName and WithClock check their argument when called, like the other
// options: an invalid name or a nil clock panics naming the option.
func TestWithNameAndWithClockPanicOnInvalidArguments(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  func()
		want string
	}{
		{"name", func() { breaker.WithName("\xff") }, "breaker: WithName"},
		{"clock", func() { breaker.WithClock(clock.Clock(nil)) }, "breaker: WithClock(nil)"},
	} {
		func() {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.HasPrefix(s, c.want) {
					if err, ok := r.(error); !ok || !strings.HasPrefix(err.Error(), c.want) {
						t.Errorf("%s: panic %v, want one starting %q", c.name, r, c.want)
					}
				}
			}()
			c.opt()
		}()
	}
}
