package resiliencetest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// ErrStuck is the error of [Drive] when the call it drives neither returns
// nor waits on the fake clock for the wall-clock time [DriveTimeout]: it is
// blocked on something else (a channel, a lock, a hang without a timeout).
var ErrStuck = errors.New("resiliencetest: call stuck: it neither returned nor waited on the fake clock")

// DriveTimeout is how long, in wall-clock time, [Drive] waits for the call
// to return or to wait on the fake clock before it gives up with
// [ErrStuck].
const DriveTimeout = 10 * time.Second

// Drive runs call on a goroutine of its own and, each time a timer is armed
// on fake (a retry's backoff or its wait for a Retry-After, a timeout, a
// [Delay] fault), moves fake forward by step, until call returns; then it returns nil. So a
// test runs a pipeline that waits seconds or hours in virtual time, without
// sleeping: fake moves only when something waits on it. (A breaker's
// cooldown arms no timer: between calls, Advance the fake yourself.)
//
// step is the virtual time of each move: a wait of d takes ceil(d/step)
// moves, so a step of about the shortest wait is both quick and exact
// enough. Drive returns [ErrStuck] (the goroutine running call is then left
// behind) if call neither returns nor arms a timer for [DriveTimeout] of
// wall-clock time. A panic in call goes on up in Drive's goroutine, with
// the same value, and a runtime.Goexit in call (such as t.FailNow) ends
// Drive's goroutine too. Drive panics if step <= 0.
//
// The fake should be the test's own: timers that other goroutines arm on it
// also move it. Call Drive from one goroutine at a time for a fake.
func Drive(fake *clock.Fake, step time.Duration, call func()) error {
	if step <= 0 {
		panic(fmt.Sprintf("resiliencetest: Drive step must be > 0, got %v", step))
	}
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
	for {
		ctx, cancel := context.WithCancel(context.Background())
		armed := make(chan error, 1)
		go func() { armed <- fake.BlockUntil(ctx, 1) }()
		select {
		case <-done:
			cancel()
			<-armed
			switch {
			case panicked && panicVal == nil:
				runtime.Goexit() // call called runtime.Goexit (t.FailNow, say)
			case panicked:
				panic(panicVal)
			}
			return nil
		case <-armed:
			cancel()
			fake.Advance(step)
			guard.Reset(DriveTimeout)
		case <-guard.C:
			cancel()
			<-armed
			return ErrStuck
		}
	}
}
