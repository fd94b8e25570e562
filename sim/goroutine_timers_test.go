package sim

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
)

// A goroutine of the pipeline sets, stops and resets timers only once it
// holds the baton (the package doc's Determinism), as it calls the server
// (TestGoroutineOfThePipelineWaitsForTheBatonBeforeTheServer): what it
// does comes after the events already queued for that instant. Two
// clients at 0; the first runs forked on a goroutine of its own and waits
// for it; the second client's call, queued first, runs second.
func TestGoroutineOfThePipelineWaitsForTheBatonBeforeItsTimers(t *testing.T) {
	ms := time.Millisecond
	var mu sync.Mutex // the goroutine of the pipeline and the callbacks share what they record
	var got []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, s)
	}
	run := func(before, forked, second func(clk clock.Clock)) []string {
		got = nil
		n := 0
		Run(Scenario{Clients: []Clients{{Calls: 1}, {Calls: 1}}}, PolicySet[int]{Build: func(env *Env) resilience.Policy[int] {
			clk := env.Clock()
			return resilience.New("fork first", func(ctx context.Context, next resilience.Next[int]) (int, error) {
				if n++; n > 1 {
					second(clk)
					return next.Call(ctx)
				}
				before(clk)
				done := make(chan struct{})
				go func() {
					defer close(done)
					forked(clk)
				}()
				<-done
				return next.Call(ctx)
			})
		}})
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	nothing := func(clock.Clock) {}
	var af clock.Timer    // set by the first call before it forks
	var timer clock.Timer // set by the goroutine, under mu

	for _, c := range []struct {
		name                   string
		before, forked, second func(clk clock.Clock)
		want                   []string
	}{
		{"AfterFunc", nothing,
			func(clk clock.Clock) { clk.AfterFunc(0, func() { note("the goroutine's") }) },
			func(clk clock.Clock) { clk.AfterFunc(0, func() { note("the second call's") }) },
			[]string{"the second call's", "the goroutine's"}},
		{"NewTimer", nothing,
			func(clk clock.Clock) {
				tm := clk.NewTimer(0)
				mu.Lock()
				defer mu.Unlock()
				timer = tm
			},
			func(clk clock.Clock) {
				clk.AfterFunc(0, func() {
					mu.Lock()
					defer mu.Unlock()
					switch {
					case timer == nil:
						got = append(got, "no timer yet")
					case len(timer.C()) > 0:
						got = append(got, "the goroutine's timer had fired")
					default:
						got = append(got, "the goroutine's timer had not fired")
					}
				})
			},
			// The goroutine's timer, set after the second call's
			// AfterFunc, fires after it.
			[]string{"the goroutine's timer had not fired"}},
		{"Stop", func(clk clock.Clock) { af = clk.AfterFunc(0, func() { note("fired") }) },
			func(clock.Clock) {
				if af.Stop() {
					note("stopped before it fired")
				}
			},
			nothing, []string{"fired"}},
		{"Reset", func(clk clock.Clock) {
			af = clk.AfterFunc(0, func() { note("fired at " + clk.Now().Sub(epoch).String()) })
		},
			func(clock.Clock) {
				if af.Reset(ms) {
					note("reset before it fired")
				}
			},
			nothing, []string{"fired at 0s", "fired at 1ms"}},
	} {
		if diff := cmp.Diff(c.want, run(c.before, c.forked, c.second)); diff != "" {
			t.Errorf("%s from a goroutine of the pipeline: events mismatch (-want +got):\n%s", c.name, diff)
		}
	}
}
