package policytest

import (
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/policy/chaos"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// A nil option panics at construction with a message naming the package and
// the option, in every policy, not with a nil dereference.
func TestNilOptionPanicsWithAMessage(t *testing.T) {
	for _, c := range []struct {
		want  string
		build func()
	}{
		{"breaker: New option must not be nil", func() { breaker.New(nil) }},
		{"bulkhead: New option must not be nil", func() { bulkhead.New(1, nil) }},
		{"ratelimit: option must not be nil", func() { ratelimit.New(1, 1, nil) }},
		{"ratelimit: option must not be nil", func() { ratelimit.NewKeyed[string](1, 1, nil) }},
		{"retry: New option must not be nil", func() { retry.New[int](nil) }},
		{"timeout: New option must not be nil", func() { timeout.New[int](time.Second, nil) }},
		{"hedge: New option must not be nil", func() { hedge.New[int](time.Second, nil) }},
	} {
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			c.build()
			return "no panic"
		}()
		if got != c.want {
			t.Errorf("panic %q, want %q", got, c.want)
		}
	}
}

// The options every guard shares check their argument in one place
// (internal/guardopt), so they panic with one wording in every package:
// WithClock(nil) would silently mean clock.Real(), and a name must be
// valid UTF-8.
func TestSharedOptionsPanicAlike(t *testing.T) {
	type shared struct {
		clock func(clock.Clock)
		name  func(string)
	}
	for pkg, o := range map[string]shared{
		"adaptive":  {func(c clock.Clock) { adaptive.WithClock(c) }, func(n string) { adaptive.WithName(n) }},
		"breaker":   {func(c clock.Clock) { breaker.WithClock(c) }, func(n string) { breaker.WithName(n) }},
		"bulkhead":  {func(c clock.Clock) { bulkhead.WithClock(c) }, func(n string) { bulkhead.WithName(n) }},
		"cache":     {func(c clock.Clock) { cache.WithClock(c) }, func(n string) { cache.WithName(n) }},
		"hedge":     {func(c clock.Clock) { hedge.WithClock(c) }, func(n string) { hedge.WithName(n) }},
		"ratelimit": {func(c clock.Clock) { ratelimit.WithClock(c) }, func(n string) { ratelimit.WithName(n) }},
		"retry":     {func(c clock.Clock) { retry.WithClock(c) }, func(n string) { retry.WithName(n) }},
		"throttle":  {func(c clock.Clock) { throttle.WithClock(c) }, func(n string) { throttle.WithName(n) }},
		"timeout":   {func(c clock.Clock) { timeout.WithClock(c) }, func(n string) { timeout.WithName(n) }},
		"chaos":     {nil, func(n string) { chaos.WithName(n) }}, // an injector measures no time
	} {
		panicOf := func(f func()) (msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg = fmt.Sprint(r)
				}
			}()
			f()
			return "no panic"
		}
		if o.clock != nil {
			want := pkg + ": WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"
			if got := panicOf(func() { o.clock(nil) }); got != want {
				t.Errorf("%s.WithClock(nil): panic %q, want %q", pkg, got, want)
			}
			if got := panicOf(func() { o.clock(clock.NewFake()) }); got != "no panic" {
				t.Errorf("%s.WithClock(fake): panic %q", pkg, got)
			}
		}
		want := pkg + `: WithName("db\xff"): name must be valid UTF-8`
		if got := panicOf(func() { o.name("db\xff") }); got != want {
			t.Errorf("%s.WithName: panic %q, want %q", pkg, got, want)
		}
	}
}
