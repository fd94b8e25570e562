package resiliencetest

import (
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// ErrStuck is the error of [Drive] when the call it drives neither returns
// nor lets the fake clock move for the wall-clock time [DriveTimeout]: it
// is blocked on something other than the fake clock (a channel, a lock, a
// hang without a timeout), or it keeps running without waiting.
var ErrStuck = errors.New("resiliencetest: call stuck: it neither returned nor waited on the fake clock")

// DriveTimeout is how long, in wall-clock time, [Drive] waits for the call
// to return or to let the fake clock move before it gives up with
// [ErrStuck].
const DriveTimeout = 10 * time.Second

// Drive runs call on a goroutine of its own and moves fake from timer to
// timer until call returns; then it returns nil. So a test runs a pipeline
// that waits seconds or hours in virtual time (a retry's backoff or its
// wait for a Retry-After, a timeout, a hedge's delay, a bulkhead's queue
// wait, a [Delay] fault), without sleeping. (A breaker's cooldown arms no
// timer: between calls, Advance the fake yourself.)
//
// The rule, which makes a driven call deterministic: Drive moves the clock
// only when the pipeline is quiescent, that is when every goroutine of it
// is blocked (on a channel, a select, a sync.Cond, a sync.WaitGroup or a
// mutex another goroutine holds: waiting on a timer of fake, on a context,
// on another goroutine), none running, runnable, sleeping on the real
// clock or in a system call. Then it fires the one timer of fake with the
// earliest deadline, moving the clock exactly to that deadline (with
// [clock.Fake.AdvanceNext]); timers with equal deadlines fire one at a
// time, in the order they were armed, with the pipeline quiescent again
// before each. Once call has returned, Drive moves the clock no further;
// it waits until the goroutines of the pipeline left behind (an attempt a
// hedge gave up on, say) are blocked or gone, for at most [DriveTimeout],
// and returns. So with the same inputs (the same faults and seeds,
// the same pipeline, the same fake), a driven call returns the same
// outcome at the same instant of fake on every run, whatever the goroutine
// schedule and GOMAXPROCS, however the timers of the op, of the policies
// and of the caller's context overlap or coincide.
//
// The goroutines of the pipeline are the goroutine running call, and every
// goroutine created since Drive began by it, by the goroutine calling
// Drive (which runs fake's AfterFunc callbacks), or by one of those, at any
// depth; a goroutine whose creator exited before Drive saw it is counted
// in; so is a goroutine that an earlier Drive on the same fake counted in
// and that was still alive when that Drive returned (an op a timeout
// abandoned, asleep on fake). Other goroutines that existed before Drive
// began (a server the test started) are not waited for: what they do
// when a timer wakes them races with the pipeline. Drive reads
// the goroutines' states from runtime.Stack with all goroutines, which
// stops the world for a few microseconds per goroutine; it works the same
// inside and outside a testing/synctest bubble.
//
// Drive fixes when time moves, not how goroutines race between two moves.
// Limits: goroutines of the pipeline that run at the same time race as
// the schedule decides (an attempt a hedge starts, or a bulkhead slot
// hands on, just as the winner returns may or may not reach the
// dependency before the hedge cancels it); timers they arm for the same
// deadline fire in the order the schedule armed them; and a pipeline that
// also waits on something other than fake (the real clock, the network)
// is quiescent whenever it waits there, so fake may move meanwhile.
//
// step does not decide how far the clock moves: each move goes straight
// to the next deadline, so the outcome is the same for every step; step
// must still be > 0 and Drive panics otherwise.
//
// Drive returns [ErrStuck] (the goroutine running call is then left
// behind) if call neither returns nor lets fake move for [DriveTimeout] of
// wall-clock time: with no timer armed and the pipeline quiescent, Drive
// waits that long for something outside it to wake it. A panic in call
// goes on up in Drive's goroutine, with the same value, and a
// runtime.Goexit in call (such as t.FailNow) ends Drive's goroutine too.
//
// The fake should be the test's own: timers that other goroutines arm on it
// also fire. Call Drive from one goroutine at a time for a fake.
func Drive(fake *clock.Fake, step time.Duration, call func()) error {
	if step <= 0 {
		panic(fmt.Sprintf("resiliencetest: Drive step must be > 0, got %v", step))
	}
	p := newPipeline(fake)
	done := make(chan struct{})
	var panicked bool
	var panicVal any
	go func() {
		defer close(done)
		panicked = true
		defer func() {
			if panicked {
				panicVal = recover()
			}
		}()
		call()
		panicked = false
	}()
	guard := time.NewTimer(DriveTimeout)
	defer guard.Stop()
	// finish lets the goroutines the call left behind settle, then hands
	// back the call's panic or Goexit, if any.
	finish := func() error {
		guard.Reset(DriveTimeout)
		var w waiter
		for !p.quiescent() {
			select {
			case <-guard.C:
				p.save(fake)
				return nil // call returned; what it left behind keeps running
			default:
			}
			w.wait(time.Millisecond)
		}
		p.save(fake)
		switch {
		case panicked && panicVal == nil:
			runtime.Goexit() // call called runtime.Goexit (t.FailNow, say)
		case panicked:
			panic(panicVal)
		}
		return nil
	}
	var w waiter
	for {
		select {
		case <-done:
			return finish()
		case <-guard.C:
			p.save(fake)
			return ErrStuck
		default:
		}
		if !p.quiescent() {
			w.wait(time.Millisecond)
			continue
		}
		// The goroutine running call closes done before it exits, and is
		// not blocked until then: once it is gone from a quiescent
		// snapshot, done is closed.
		select {
		case <-done:
			return finish()
		default:
		}
		if !fake.AdvanceNext() {
			w.wait(50 * time.Millisecond) // no timer: only something outside the pipeline can wake it
			continue
		}
		w = waiter{}
		guard.Reset(DriveTimeout) // Go 1.23+ timers: no stale value survives Reset
	}
}

// waiter paces Drive's polls while the pipeline runs: it yields the
// processor for the first polls, then sleeps for doubling spells, up to
// limit.
type waiter struct {
	n     int
	sleep time.Duration
}

func (w *waiter) wait(limit time.Duration) {
	w.n++
	if w.n <= 64 {
		runtime.Gosched()
		return
	}
	w.sleep = min(max(2*w.sleep, time.Microsecond), limit)
	time.Sleep(w.sleep)
}
