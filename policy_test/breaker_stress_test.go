package policytest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// These tests run the breaker from many goroutines at once (run them with
// -race) and check what must hold under any interleaving.

// TestBreakerStressTrialBound lets many goroutines rush a half-open
// breaker at once, round after round: exactly MaxTrials get a trial, the
// others get ErrTooManyTrials, and every slot comes back when its trial
// reports (no permit is lost or counted twice).
func TestBreakerStressTrialBound(t *testing.T) {
	const goroutines, maxTrials, rounds = 16, 3, 50
	f := clock.NewFake()
	b := breaker.New(breaker.WithClock(f), breaker.WithThreshold(1), breaker.WithCooldown(time.Second),
		breaker.WithMaxTrials(maxTrials), breaker.WithSuccessThreshold(1000))
	b.Record(true)
	f.Advance(time.Second)

	for round := range rounds {
		var (
			admitted, refused atomic.Int32
			allowed, done     sync.WaitGroup
			release           = make(chan struct{})
			start             = make(chan struct{})
		)
		allowed.Add(goroutines)
		for range goroutines {
			done.Go(func() {
				<-start
				p, err := b.Allow()
				if err != nil {
					if !errors.Is(err, breaker.ErrTooManyTrials) {
						t.Errorf("Allow = %v, want ErrTooManyTrials", err)
					}
					refused.Add(1)
					allowed.Done()
					return
				}
				admitted.Add(1)
				allowed.Done()
				<-release
				if round%2 == 0 {
					p.Report(breaker.Ignored) // frees the slot
				} else {
					p.Done(nil) // a success, short of SuccessThreshold
				}
				p.Done(errors.New("second report, ignored"))
			})
		}
		close(start)
		waitWithin(t, &allowed, fmt.Sprintf("round %d: %d goroutines' Allow", round, goroutines))
		if a, r := admitted.Load(), refused.Load(); a != maxTrials || r != goroutines-maxTrials {
			t.Fatalf("round %d: %d admitted, %d refused; want %d and %d", round, a, r, maxTrials, goroutines-maxTrials)
		}
		if got := b.Counts().Refused; got != uint64(goroutines-maxTrials)*uint64(round+1) {
			t.Fatalf("round %d: Refused = %d", round, got)
		}
		close(release)
		waitWithin(t, &done, fmt.Sprintf("round %d: the trials' reports", round))
		if got, want := b.Counts().Successes, uint64(maxTrials*((round+1)/2)); got != want {
			t.Fatalf("round %d: Successes = %d, want %d", round, got, want)
		}
	}
	if s := b.State(); s != breaker.HalfOpen {
		t.Fatalf("State() = %v, want half-open", s)
	}
}

// TestBreakerStressCountsAddUp has goroutines report outcomes through
// every entry point while others read the counts, then checks the totals
// exactly. Before the counted calls, the goroutines take permits and a
// Reset makes them stale; those stale reports race with the fresh ones and
// must count nowhere.
func TestBreakerStressCountsAddUp(t *testing.T) {
	const goroutines, calls, stale = 8, 2000, 50
	for _, c := range []struct {
		name string
		opts []breaker.Option
	}{
		{"no window", nil},
		{"count window", []breaker.Option{breaker.WithWindowCalls(1 << 30)}},
		{"time window", []breaker.Option{breaker.WithWindowDuration(time.Hour)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := breaker.New(append(c.opts, breaker.WithClock(clock.NewFake()))...)
			p := breaker.Policy[int](b)
			stalePermits := make([][]breaker.Permit, goroutines)
			for g := range stalePermits {
				stalePermits[g] = make([]breaker.Permit, stale)
				for i := range stalePermits[g] {
					stalePermits[g][i], _ = b.Allow()
				}
			}
			b.ForceClosed() // disabled: counts, never trips; and a new generation

			var (
				successes, failures atomic.Uint64
				wg, readers         sync.WaitGroup
				stop                = make(chan struct{})
			)
			for range 2 {
				readers.Go(func() {
					var last breaker.Counts
					for {
						select {
						case <-stop:
							return
						default:
						}
						c := b.Counts()
						if c.Calls != c.Successes+c.Failures || c.Successes < last.Successes || c.Failures < last.Failures {
							t.Errorf("Counts() = %+v after %+v", c, last)
							return
						}
						last = c
					}
				})
			}
			for g := range goroutines {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(g), 1))
					for i := range calls {
						if i < stale {
							stalePermits[g][i].Done(nil)
						}
						var err error
						switch r.IntN(4) {
						case 0:
							err = errors.New("failed")
							failures.Add(1)
						case 1:
							err = context.Canceled // ignored
						default:
							successes.Add(1)
						}
						switch r.IntN(3) {
						case 0:
							pm, aerr := b.Allow()
							if aerr != nil {
								t.Errorf("Allow = %v", aerr)
								return
							}
							pm.Done(err)
						case 1:
							_, _ = p.Do(context.Background(), func(context.Context) (int, error) { return 0, err })
						default:
							if err == context.Canceled {
								continue // Record has no ignored outcome
							}
							b.Record(err != nil)
						}
					}
				})
			}
			waitWithin(t, &wg, "the reporting goroutines")
			close(stop)
			waitWithin(t, &readers, "the Counts readers")
			s, fl := successes.Load(), failures.Load()
			want := breaker.Counts{Calls: s + fl, Successes: s, Failures: fl, FailureRatio: float64(fl) / float64(s+fl)}
			got := b.Counts()
			got.ConsecutiveSuccesses, got.ConsecutiveFailures = 0, 0 // order-dependent
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("Counts() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBreakerStressChaos mixes everything at once: calls that fail and
// succeed, a clock that moves, manual control. What must hold: no data
// race, no deadlock, transitions delivered one at a time and in order,
// each following the one before, and a breaker that works afterwards.
func TestBreakerStressChaos(t *testing.T) {
	const goroutines, calls = 8, 3000
	f := clock.NewFake()
	var (
		mu         sync.Mutex
		delivering bool
		events     []breaker.Transition
	)
	var b *breaker.Breaker
	b = breaker.New(breaker.WithClock(f), breaker.WithThreshold(3), breaker.WithFailureRatio(0.5),
		breaker.WithWindowDuration(time.Second), breaker.WithMinCalls(4), breaker.WithSlowCall(50*time.Millisecond),
		breaker.WithCooldown(100*time.Millisecond), breaker.WithMaxTrials(2), breaker.WithSuccessThreshold(2),
		breaker.WithOnStateChange(func(tr breaker.Transition) {
			mu.Lock()
			if delivering {
				t.Error("two callbacks at once")
			}
			delivering = true
			events = append(events, tr)
			mu.Unlock()
			_ = b.Counts() // a callback may read the breaker
			mu.Lock()
			delivering = false
			mu.Unlock()
		}))
	p := breaker.Policy[int](b)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 2))
			for range calls {
				switch n := r.IntN(100); {
				case n < 2:
					f.Advance(time.Duration(r.IntN(150)) * time.Millisecond)
				case n < 3:
					[]func(){b.ForceOpen, b.ForceClosed, b.Reset}[r.IntN(3)]()
				case n < 50:
					var err error
					if r.IntN(3) == 0 {
						err = errors.New("failed")
					}
					_, _ = p.Do(context.Background(), func(context.Context) (int, error) { return 0, err })
				default:
					pm, err := b.Allow()
					if err != nil {
						continue
					}
					pm.Report(breaker.Outcome(r.IntN(3)))
				}
			}
		})
	}
	waitWithin(t, &wg, "the chaos goroutines")
	b.Reset()
	mu.Lock()
	defer mu.Unlock()
	if len(events) < 10 {
		t.Fatalf("only %d transitions: the schedule exercises too little", len(events))
	}
	for i := 1; i < len(events); i++ {
		if prev, tr := events[i-1], events[i]; tr.From != prev.To || tr.Generation <= prev.Generation || tr.At.Before(prev.At) {
			t.Fatalf("transition %d %+v does not follow %+v", i, tr, prev)
		}
	}
	if s := b.State(); s != breaker.Closed {
		t.Fatalf("State() after Reset = %v", s)
	}
	if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); err != nil {
		t.Fatalf("Do after Reset = %v", err)
	}
}

// TestBreakerStressRefusalsMatchEvents races callers (some refused, some
// failing, some succeeding) with transitions, due ones and manual ones: at
// the end the breaker's lifetime refusals are exactly its refusal events,
// however the refusals interleaved with the transitions (a refusal counted
// in a generation that has just ended still counts, and is still reported).
func TestBreakerStressRefusalsMatchEvents(t *testing.T) {
	var events telemetry.Counter
	f := clock.NewFake()
	b := breaker.New(breaker.WithName("db"), breaker.WithClock(f), breaker.WithThreshold(2),
		breaker.WithCooldown(time.Millisecond), breaker.WithMaxTrials(2), breaker.WithObserver(&events))
	stop := make(chan struct{})
	var callers sync.WaitGroup
	for g := range 4 {
		callers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				p, err := b.Allow()
				if err != nil {
					runtime.Gosched() // let the driver move the breaker on: 4 spinning callers on 2 cores starve it
					continue
				}
				if r.IntN(3) == 0 {
					p.Done(nil)
				} else {
					p.Done(errors.New("boom"))
				}
			}
		})
	}
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; events.Count("db", breaker.EventRefused) < 5000 || i < 300; i++ {
		if time.Now().After(deadline) {
			close(stop)
			callers.Wait()
			t.Fatalf("after 30s: %d refusals, %d rounds; want 5000 and 300", events.Count("db", breaker.EventRefused), i)
		}
		switch i % 7 {
		case 3:
			b.ForceOpen()
		case 6:
			b.Reset()
		default:
			f.Advance(time.Millisecond)
		}
		runtime.Gosched()
	}
	close(stop)
	callers.Wait()
	if s, got := b.Stats(), events.Count("db", breaker.EventRefused); s.Refused != got {
		t.Fatalf("Stats().Refused = %d, refusal events = %d", s.Refused, got)
	}
}
