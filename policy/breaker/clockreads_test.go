package breaker_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// nowCounter is a clock that counts the reads of its time.
type nowCounter struct {
	clock.Clock
	reads atomic.Int64
}

func (c *nowCounter) Now() time.Time {
	c.reads.Add(1)
	return c.Clock.Now()
}

// A closed breaker reads the clock for a call only when a rule needs the
// call's time: a slow-call rule (its duration) or a time-based window (its
// bucket). With neither, its closed path reads no clock at all.
func TestClosedPathReadsTheClockOnlyForTimedRules(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  []breaker.Option
		reads bool
	}{
		{"no timed rule", nil, false},
		{"a failure ratio over calls", []breaker.Option{breaker.WithFailureRatio(0.5)}, false},
		{"a slow-call rule", []breaker.Option{breaker.WithSlowCall(time.Second), breaker.WithSlowCallRatio(0.5)}, true},
		{"a time-based window", []breaker.Option{breaker.WithFailureRatio(0.5), breaker.WithWindowDuration(time.Minute)}, true},
	} {
		clk := &nowCounter{Clock: clock.NewFake()}
		b := breaker.New(append(c.opts, breaker.WithClock(clk))...)
		before := clk.reads.Load()
		for range 10 {
			p, err := b.Allow()
			if err != nil {
				t.Fatalf("%s: Allow = %v", c.name, err)
			}
			p.Done(nil)
		}
		if got := clk.reads.Load() - before; (got > 0) != c.reads {
			t.Errorf("%s: %d reads of the clock for 10 calls; want some: %v", c.name, got, c.reads)
		}
	}
}
