package sim

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
)

// A run that makes no progress for 10s of wall-clock time panics (Run's
// doc); the call that held it up, once it ends, starts no other call and
// leaves no goroutine behind. In a bubble: a client of two calls whose
// first holds the run up for 15s of wall-clock time (the watchdog, ticking
// each second, gives up within 11s), either itself, while
// it holds the baton, or through a goroutine it started, while the
// scheduler waits for every goroutine of the run to block; the bubble
// ends with all its goroutines gone (else synctest.Test fails), the
// second call never made, and the first call's server call, asleep on the
// clock or made after the end, cut short.
func TestStuckRunLeavesNoGoroutineBehind(t *testing.T) {
	for _, c := range []struct {
		name string
		hold func()
	}{
		{"the call", func() { time.Sleep(15 * time.Second) }}, // wall-clock, in the bubble
		{"a goroutine of the call", func() { go time.Sleep(15 * time.Second) }},
	} {
		bubble(t, func(t *testing.T) {
			var n atomic.Int32
			var err atomic.Value // the first call's error
			wantPanic(t, "10s of wall-clock time", func() {
				Run(Scenario{Duration: time.Second, Clients: []Clients{{Calls: 2}}}, PolicySet[int]{Build: func(*Env) resilience.Policy[int] {
					return resilience.New("slow", func(ctx context.Context, next resilience.Next[int]) (int, error) {
						if n.Add(1) > 1 {
							return next.Call(ctx)
						}
						c.hold()
						v, e := next.Call(ctx)
						err.Store(fmt.Sprint(e))
						return v, e
					})
				}})
			})
			time.Sleep(10 * time.Second) // what held the run up ends, 15s after it began
			if got := n.Load(); got != 1 {
				t.Errorf("%s held the run up: %d calls started, want 1: none after the run", c.name, got)
			}
			if got := err.Load(); got != context.Canceled.Error() {
				t.Errorf("%s held the run up: the first call's server call returned %v, want %v: cut by the end", c.name, got, context.Canceled)
			}
		})
	}
}
