package resiliencetest_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// Drive inside a testing/synctest bubble, where the wall-clock time it
// waits between its polls is the bubble's: it advances only while every
// goroutine of the bubble, Drive's own included, is durably blocked. A
// Drive that polled without ever sleeping would keep the bubble's clock
// still, so a wait on it (its DriveTimeout guard, a time.Sleep of the
// call's) would never end. Each test runs its bubble on a goroutine of its
// own and fails if it has not returned after 2s of wall-clock time: a
// bound for failure only, not a measure of speed.

// inBubble runs f in a bubble and fails the test if it has not returned
// after 2s.
func inBubble(t *testing.T, what string, f func(t *testing.T)) {
	t.Helper()
	testwait.BubbleWithin(t, 2*time.Second, what, f)
}

// A call blocked on something other than the fake is stuck: Drive gives up
// with ErrStuck after DriveTimeout of the bubble's time.
func TestDriveStuck(t *testing.T) {
	inBubble(t, "Drive of a stuck call in a bubble", func(t *testing.T) {
		release := make(chan struct{})
		err := resiliencetest.Drive(clock.NewFake(), time.Second, func() { <-release })
		if !errors.Is(err, resiliencetest.ErrStuck) {
			t.Errorf("Drive = %v, want ErrStuck", err)
		}
		close(release) // the call's goroutine ends, as the bubble needs
	})
}

// A goroutine the call left behind, sleeping on the real clock, is waited
// for: Drive returns once it has settled.
func TestDriveWaitsForALeftoverSleepingOnTheRealClock(t *testing.T) {
	inBubble(t, "Drive of a call that left a goroutine asleep on the real clock", func(t *testing.T) {
		block := make(chan struct{})
		var settled atomic.Bool
		err := resiliencetest.Drive(clock.NewFake(), time.Second, func() {
			go func() {
				time.Sleep(100 * time.Millisecond)
				settled.Store(true)
				<-block
			}()
		})
		if err != nil || !settled.Load() {
			t.Errorf("Drive = %v, the leftover settled: %v; want nil, true", err, settled.Load())
		}
		close(block)
	})
}

// A goroutine that existed before Drive began (a server the test started)
// is not of the pipeline: Drive moves the fake while it keeps sleeping on
// the real clock. A Drive that waited for it would never find the pipeline
// quiescent, and would give up with ErrStuck.
func TestDriveLeavesOutEarlierGoroutines(t *testing.T) {
	inBubble(t, "Drive of a call that sleeps on the fake, beside a goroutine older than Drive,", func(t *testing.T) {
		stop, gone := make(chan struct{}), make(chan struct{})
		go func() { // a server, started before Drive: never blocked until stopped
			defer close(gone)
			for {
				select {
				case <-stop:
					return
				default:
					time.Sleep(time.Millisecond)
				}
			}
		}()
		fake := clock.NewFake()
		slept := errors.New("the call did not sleep")
		err := resiliencetest.Drive(fake, time.Second, func() {
			slept = fake.Sleep(context.Background(), time.Hour)
		})
		close(stop)
		<-gone
		if err != nil || slept != nil {
			t.Errorf("Drive = %v after the call's Sleep on the fake returned %v; want nil, nil", err, slept)
		}
	})
}

// A call that sleeps on the real clock before it waits on the fake is
// running, not stuck: Drive waits for it, then moves the fake.
func TestDriveWaitsForACallSleepingOnTheRealClock(t *testing.T) {
	inBubble(t, "Drive of a call that sleeps on the real clock", func(t *testing.T) {
		fake := clock.NewFake()
		slept := errors.New("the call did not sleep on the fake")
		err := resiliencetest.Drive(fake, time.Second, func() {
			time.Sleep(100 * time.Millisecond)
			slept = fake.Sleep(context.Background(), time.Second)
		})
		if err != nil || slept != nil {
			t.Errorf("Drive = %v after the call's Sleep on the fake returned %v; want nil, nil", err, slept)
		}
	})
}
