package sim

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/goroutines"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// PolicySet is a pipeline to simulate: a name and a function that builds
// it, once per run, on the run's [Env].
type PolicySet[T any] struct {
	Name string
	// Build returns the pipeline that every client of the run calls the
	// server through. It must give every policy that takes a clock
	// env.Clock() (WithClock), every backoff schedule with jitter
	// env.Rand() (WithRand), and may watch a breaker with env.Watch.
	Build func(env *Env) resilience.Policy[T]
}

// Env is what a [PolicySet]'s Build gets from the run: its clock and its
// random source. An Env is valid for the run that made it.
type Env struct {
	w       *world
	rnd     *rand.Rand
	watched *breaker.Breaker
}

// Clock returns the run's clock: virtual time, on which the real policies
// wait (retry's backoff, the breaker's cooldown, a timeout, a rate
// limiter's wait, a hedge's delay, a bulkhead queue's MaxWait on a
// NewTimer) as they would on the real clock. It is valid only inside the
// run, from Build on: Build may read its time and set an AfterFunc (to
// force a watched breaker open at some instant, say) or a NewTimer, which
// fire at their virtual time in the run; its Sleep may be called by the
// simulated calls and the goroutines the pipeline starts, not by Build or
// an AfterFunc callback (Sleep then panics).
func (e *Env) Clock() clock.Clock { return simClock{e.w} }

// Rand returns the run's random source for the pipeline, seeded from the
// scenario's seed: give it to every jittered backoff schedule
// (backoff.Schedule.WithRand), so that the run is repeatable. It is not
// safe for simultaneous use: the policies' WithRand options draw from it
// under a lock of their own; code of your own that draws from it in a
// pipeline whose calls wait on each other (see the package doc's Limits)
// must lock it too.
func (e *Env) Rand() *rand.Rand { return e.rnd }

// Watch records b's state at the end of each bucket of the run, for the
// Result's Breaker series and the plots. One breaker per run; a second
// Watch replaces the first.
func (e *Env) Watch(b *breaker.Breaker) { e.watched = b }

// Run simulates scenario s with the pipeline of set, in virtual time, and
// returns what happened. The run is deterministic: the same scenario, set
// and seed give the same Result. It takes no wall-clock time beyond the
// computation (10 000 client calls take a few tens of milliseconds through
// policies that wait only on the clock; see the package doc's Limits).
//
// Each client call runs the pipeline on the server's op under a context
// that ends only when the run does. Run panics with the message of
// [Scenario.Validate] if s is invalid, if Build is nil, with a simulated
// call's panic, if a simulated call blocks on something that nothing in the
// run will wake, and if the run makes no progress for 10 s of wall-clock
// time (a call in a busy loop, or blocked on something outside the run).
func Run[T any](s Scenario, set PolicySet[T]) *Result {
	if err := s.Validate(); err != nil {
		panic(err.Error())
	}
	if set.Build == nil {
		panic("sim: PolicySet.Build must not be nil (policy set " + set.Name + ")")
	}
	s = s.withDefaults()
	w := newWorld()
	env := &Env{w: w, rnd: rand.New(rand.NewPCG(s.Seed, 0x5EED))}
	// Build runs on the scheduler's goroutine: an AfterFunc or a NewTimer
	// it sets is queued as a callback's would be, not taken for a call of
	// a goroutine of the pipeline (which would wait for the baton).
	w.sched = goroutines.Current()
	p := set.Build(env)

	res := &Result{Name: set.Name, Scenario: s.Name, Duration: s.Duration, Bucket: s.Bucket, Outages: slices.Clone(s.Server.Outages),
		Clients: slices.Clone(s.Clients)}
	buckets := int((s.Duration + s.Bucket - 1) / s.Bucket)
	rec := newRecorder(res, buckets)
	srv := newServer(s.Server, w, rec, rand.New(rand.NewPCG(s.Seed, 0x5E4E4)), rand.New(rand.NewPCG(s.Seed, 0x510)))
	op := resilience.Op[T](func(ctx context.Context) (T, error) {
		var zero T
		return zero, srv.call(ctx)
	})

	w.mu.Lock()
	client := 0
	for _, g := range s.Clients {
		n := max(g.N, 1)
		stop := g.Stop
		if stop == 0 || stop > s.Duration {
			stop = s.Duration
		}
		for range n {
			client++
			rng := rand.New(rand.NewPCG(s.Seed, uint64(client)))
			start := g.Start
			if g.Ramp > 0 {
				start += time.Duration(rng.Int64N(int64(g.Ramp)))
			}
			w.spawnLocked(start, func() {
				for k := 0; g.Calls == 0 || k < g.Calls; k++ {
					stopping, began := w.state()
					if stopping || began >= stop {
						return
					}
					_, err := p.Do(w.root, op)
					w.enter() // the call may have waited on something other than the clock
					w.mu.Lock()
					stopping, now := w.stopping, w.now
					if !stopping {
						rec.end(now, now-began, err)
					} else {
						rec.unfinished(now)
					}
					w.mu.Unlock()
					if stopping {
						return // cut short by the end of the run
					}
					if g.Think > 0 && w.sleep(w.root, think(rng, g.Think)) != nil {
						return
					}
				}
			})
		}
	}
	if env.watched != nil {
		b := env.watched
		res.Breaker = make([]breaker.State, buckets)
		for i := range buckets {
			w.scheduleLocked(&event{fn: func() { res.Breaker[i] = b.State() }, index: -1}, min(time.Duration(i+1)*s.Bucket, s.Duration)-1)
		}
	}
	w.mu.Unlock()

	w.run(s.Duration)
	return res
}

// think draws a pause of the given mean, exponentially distributed, capped
// at 20 × mean.
func think(rng *rand.Rand, mean time.Duration) time.Duration {
	return time.Duration(min(rng.ExpFloat64(), 20) * float64(mean))
}

// Compare runs s with each policy set and returns their results, in order.
func Compare[T any](s Scenario, sets ...PolicySet[T]) []*Result {
	rs := make([]*Result, len(sets))
	for i, set := range sets {
		rs[i] = Run(s, set)
	}
	return rs
}
