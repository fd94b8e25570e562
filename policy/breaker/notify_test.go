package breaker_test

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

func TestTransitionsAreDeliveredInOrder(t *testing.T) {
	var got []breaker.Transition
	b, f := newFake(breaker.WithName("db"), breaker.WithThreshold(2), breaker.WithCooldown(time.Minute),
		breaker.WithOnStateChange(func(tr breaker.Transition) { got = append(got, tr) }))
	epoch := clock.NewFake().Now()
	fail(t, b, f, 2)
	f.Advance(2 * time.Minute)                                // half-open at +1m, noticed at +2m
	if err := call(t, b, f, 0, breaker.Failure); err != nil { // the trial fails
		t.Fatal(err)
	}
	f.Advance(time.Minute)
	succeed(t, b, f, 1)
	b.ForceOpen()
	b.ForceOpen() // same state: a new generation, no transition
	b.ForceClosed()
	b.Reset() // closed to closed: no transition

	at := func(d time.Duration) time.Time { return epoch.Add(d) }
	want := []breaker.Transition{
		{Name: "db", From: breaker.Closed, To: breaker.Open, Generation: 2, At: at(0),
			Counts: breaker.Counts{Calls: 2, Failures: 2, FailureRatio: 1, ConsecutiveFailures: 2}},
		{Name: "db", From: breaker.Open, To: breaker.HalfOpen, Generation: 3, At: at(time.Minute)},
		{Name: "db", From: breaker.HalfOpen, To: breaker.Open, Generation: 4, At: at(2 * time.Minute),
			Counts: breaker.Counts{Calls: 1, Failures: 1, FailureRatio: 1, ConsecutiveFailures: 1}},
		{Name: "db", From: breaker.Open, To: breaker.HalfOpen, Generation: 5, At: at(3 * time.Minute)},
		{Name: "db", From: breaker.HalfOpen, To: breaker.Closed, Generation: 6, At: at(3 * time.Minute),
			Counts: breaker.Counts{Calls: 1, Successes: 1, ConsecutiveSuccesses: 1}},
		{Name: "db", From: breaker.Closed, To: breaker.Open, Generation: 7, At: at(3 * time.Minute)},
		{Name: "db", From: breaker.Open, To: breaker.Closed, Generation: 9, At: at(3 * time.Minute)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("transitions mismatch (-want +got):\n%s", diff)
	}
}

func TestCallbackMayCallTheBreaker(t *testing.T) {
	// gobreaker's callback runs under its lock, so a callback that reads
	// the counts hangs the call that caused the transition. Here the
	// callback reads and even changes the breaker.
	var b *breaker.Breaker
	var seen []string
	b, f := newFake(breaker.WithThreshold(1), breaker.WithOnStateChange(func(tr breaker.Transition) {
		c := b.Counts()
		seen = append(seen, tr.From.String()+">"+tr.To.String()+" now "+b.State().String())
		if tr.To == breaker.Open && c.Refused == 0 {
			p, err := b.Allow() // refused, counted
			if err == nil {
				p.Done(nil)
			}
			b.Reset() // a transition from inside a callback: delivered after this one
		}
	}))
	fail(t, b, f, 1)
	want := []string{"closed>open now open", "open>closed now closed"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Fatalf("callbacks mismatch (-want +got):\n%s", diff)
	}
}

func TestCallbacksRunOneAtATimeInOrder(t *testing.T) {
	var (
		mu      sync.Mutex
		running int
		got     []breaker.Transition
	)
	b := breaker.New(breaker.WithClock(clock.NewFake()), breaker.WithOnStateChange(func(tr breaker.Transition) {
		mu.Lock()
		running++
		if running > 1 {
			t.Error("two callbacks ran at once")
		}
		got = append(got, tr)
		mu.Unlock()
		mu.Lock()
		running--
		mu.Unlock()
	}))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 200 {
				if i%2 == 0 {
					b.ForceOpen()
				} else {
					b.Reset()
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("8 goroutines forcing and resetting did not finish in 10s: a deadlock in delivery?")
	}
	b.Reset() // a final delivery: everything queued has been delivered
	if len(got) == 0 {
		t.Fatal("no transitions delivered")
	}
	for i, tr := range got {
		if i > 0 && (tr.From != got[i-1].To || tr.Generation <= got[i-1].Generation) {
			t.Fatalf("transition %d %+v does not follow %+v", i, tr, got[i-1])
		}
	}
	if last := got[len(got)-1]; last.To != b.State() {
		t.Fatalf("last transition to %v, state %v", last.To, b.State())
	}
}

func TestCallbacksOfConcurrentTransitionsNeverOverlapAndArriveInOrder(t *testing.T) {
	// Many goroutines cause transitions of every kind at once: trips by
	// failures, closes by successful trials, cooldowns ended by a clock
	// they move, ForceOpen, ForceClosed and Reset. Callbacks must never
	// overlap (an atomic counter of callbacks running, with a yield inside
	// to widen the window) and must arrive in transition order: each one
	// starts where the one before ended, in a later generation, no
	// earlier. The record is appended without a lock of its own: under
	// -race, callbacks not ordered one after the other are a data race.
	const goroutines, calls = 8, 1500
	f := clock.NewFake()
	var (
		running atomic.Int32
		got     []breaker.Transition
	)
	b := breaker.New(breaker.WithClock(f), breaker.WithThreshold(2), breaker.WithCooldown(10*time.Millisecond),
		breaker.WithMaxTrials(2), breaker.WithOnStateChange(func(tr breaker.Transition) {
			if n := running.Add(1); n != 1 {
				t.Errorf("%d callbacks running at once (at %+v)", n, tr)
			}
			got = append(got, tr)
			runtime.Gosched()
			running.Add(-1)
		}))
	p := breaker.Policy[int](b)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 3))
			for range calls {
				switch n := r.IntN(100); {
				case n < 5:
					f.Advance(time.Duration(r.IntN(15)) * time.Millisecond)
				case n < 8:
					[]func(){b.ForceOpen, b.ForceClosed, b.Reset}[r.IntN(3)]()
				case n < 10:
					_ = b.State() // makes due transitions happen, and delivers
				default:
					var err error
					if r.IntN(2) == 0 {
						err = errBoom
					}
					_, _ = p.Do(context.Background(), func(context.Context) (int, error) { return 0, err })
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the goroutines did not finish in 30s: a deadlock in delivery?")
	}
	b.Reset() // closes if need be; everything queued has been delivered
	if running.Load() != 0 {
		t.Fatalf("%d callbacks still running after every call returned", running.Load())
	}
	kinds := map[[2]breaker.State]int{}
	for i, tr := range got {
		kinds[[2]breaker.State{tr.From, tr.To}]++
		if i == 0 {
			continue
		}
		if prev := got[i-1]; tr.From != prev.To || tr.Generation <= prev.Generation || tr.At.Before(prev.At) {
			t.Fatalf("transition %d %+v does not follow %+v", i, tr, prev)
		}
	}
	// The schedule made every kind of transition, many times.
	for _, k := range [][2]breaker.State{
		{breaker.Closed, breaker.Open}, {breaker.Open, breaker.HalfOpen}, {breaker.HalfOpen, breaker.Closed},
		{breaker.HalfOpen, breaker.Open}, {breaker.Open, breaker.Closed},
	} {
		if kinds[k] < 10 {
			t.Errorf("only %d transitions %v > %v of %d: the schedule exercises too little", kinds[k], k[0], k[1], len(got))
		}
	}
	t.Logf("%d transitions: %v", len(got), kinds)
	if last := got[len(got)-1]; last.To != breaker.Closed || b.State() != breaker.Closed {
		t.Fatalf("last transition %+v, state %v; want both closed after Reset", last, b.State())
	}
}

func TestPanickingCallbackDoesNotWedgeDelivery(t *testing.T) {
	var got []breaker.State
	b, f := newFake(breaker.WithThreshold(1), breaker.WithOnStateChange(func(tr breaker.Transition) {
		got = append(got, tr.To)
		if tr.To == breaker.Open {
			panic("callback")
		}
	}))
	func() {
		defer func() {
			if r := recover(); r != "callback" {
				t.Fatalf("recover() = %v, want the callback's panic", r)
			}
		}()
		fail(t, b, f, 1)
	}()
	wantState(t, b, breaker.Open) // the transition happened
	b.Reset()
	if diff := cmp.Diff([]breaker.State{breaker.Open, breaker.Closed}, got); diff != "" {
		t.Fatalf("delivered mismatch (-want +got):\n%s", diff)
	}
}

func TestPanickingCallbackLeavesLaterTransitionsQueued(t *testing.T) {
	// One State call makes two transitions due at once: the abandoned
	// trial expires (half-open > open), then that cooldown ends (open >
	// half-open). The callback panics on the first; the panic reaches the
	// State call, the breaker is consistent, and the second transition is
	// delivered by the next call.
	var got []string
	panicked := false
	b, f := newFake(breaker.WithThreshold(1), breaker.WithCooldown(time.Second),
		breaker.WithOnStateChange(func(tr breaker.Transition) {
			got = append(got, tr.From.String()+">"+tr.To.String())
			if tr.From == breaker.HalfOpen && !panicked {
				panicked = true
				panic("callback")
			}
		}))
	fail(t, b, f, 1)
	f.Advance(time.Second)
	if _, err := b.Allow(); err != nil { // a trial, abandoned
		t.Fatal(err)
	}
	f.Advance(10 * time.Second)
	if r := recovered(func() { b.State() }); r != "callback" {
		t.Fatalf("State panicked with %v, want the callback's panic", r)
	}
	want := []string{"closed>open", "open>half-open", "half-open>open"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("delivered before the panic mismatch (-want +got):\n%s", diff)
	}
	wantCounts(t, b, breaker.Counts{}) // no deadlock; delivers the queued transition
	want = append(want, "open>half-open")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("delivered mismatch (-want +got):\n%s", diff)
	}
	wantState(t, b, breaker.HalfOpen)
	succeed(t, b, f, 1) // and later transitions too
	want = append(want, "half-open>closed")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("delivered mismatch (-want +got):\n%s", diff)
	}
}

func TestPanickingCallbackReachesThePolicyCaller(t *testing.T) {
	b, _ := newFake(breaker.WithThreshold(1), breaker.WithOnStateChange(func(breaker.Transition) { panic("callback") }))
	p := breaker.Policy[int](b)
	r := recovered(func() {
		_, _ = p.Do(context.Background(), func(context.Context) (int, error) { return 0, errBoom })
	})
	if r != "callback" {
		t.Fatalf("Do panicked with %v, want the callback's panic", r)
	}
	wantState(t, b, breaker.Open) // the failure was counted and tripped the breaker
	wantRefused(t, b, breaker.ErrOpen, 30*time.Second)
}
