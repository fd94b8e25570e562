package resiliencetest_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// Drive's wall-clock guard, DriveTimeout, in a testing/synctest bubble,
// where wall-clock time is the bubble's: the guard counts from the last
// move of the fake clock, and from the call's return while what it left
// behind settles; goroutines of a Drive that gave up are still of the
// pipeline in the next Drive on the same fake.

// A call that keeps letting the fake move is never stuck, however long it
// takes in wall-clock time.
func TestDriveGuardCountsFromTheLastMove(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := clock.NewFake()
		moves := 0
		err := resiliencetest.Drive(fake, time.Second, func() {
			for range 3 {
				time.Sleep(resiliencetest.DriveTimeout / 2) // wall-clock work between waits
				if fake.Sleep(context.Background(), time.Second) == nil {
					moves++
				}
			}
		})
		if err != nil || moves != 3 {
			t.Errorf("Drive = %v after %d waits on the fake; want nil after 3", err, moves)
		}
	})
}

// After the call returns, Drive waits for what it left behind to settle for
// up to DriveTimeout from the return, not from Drive's start.
func TestDriveGuardCountsFromTheReturn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var settled atomic.Bool
		block := make(chan struct{})
		err := resiliencetest.Drive(clock.NewFake(), time.Second, func() {
			time.Sleep(resiliencetest.DriveTimeout * 3 / 4)
			go func() {
				time.Sleep(resiliencetest.DriveTimeout / 2) // still running when the guard of Drive's start would fire
				settled.Store(true)
				<-block
			}()
		})
		if err != nil {
			t.Errorf("Drive = %v", err)
		}
		if !settled.Load() {
			t.Errorf("Drive returned before what the call left behind settled, within DriveTimeout of the call's return")
		}
		close(block)
	})
}

// A goroutine of a Drive that gave up on its call (ErrStuck) is still of the
// pipeline in the next Drive on the same fake, which waits for it to settle.
func TestDriveKeepsTheGoroutinesOfAStuckCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := clock.NewFake()
		release, block := make(chan struct{}), make(chan struct{})
		var settled atomic.Bool
		err := resiliencetest.Drive(fake, time.Second, func() {
			<-release
			time.Sleep(time.Second)
			settled.Store(true)
			<-block
		})
		if !errors.Is(err, resiliencetest.ErrStuck) {
			t.Fatalf("first Drive = %v, want ErrStuck", err)
		}
		close(release)
		if err := resiliencetest.Drive(fake, time.Second, func() {}); err != nil {
			t.Errorf("second Drive = %v", err)
		}
		if !settled.Load() {
			t.Errorf("the second Drive returned before the first call's goroutine settled")
		}
		close(block)
	})
}

// A goroutine that the first Drive left running when its guard fired is
// still of the pipeline in the next Drive on the same fake.
func TestDriveKeepsGoroutinesLeftRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := clock.NewFake()
		block := make(chan struct{})
		var settled atomic.Bool
		err := resiliencetest.Drive(fake, time.Second, func() {
			go func() {
				time.Sleep(resiliencetest.DriveTimeout * 3 / 2) // past the first Drive's guard
				settled.Store(true)
				<-block
			}()
		})
		if err != nil {
			t.Fatalf("first Drive = %v", err)
		}
		if settled.Load() {
			t.Fatalf("the first Drive waited past its guard")
		}
		if err := resiliencetest.Drive(fake, time.Second, func() {}); err != nil {
			t.Errorf("second Drive = %v", err)
		}
		if !settled.Load() {
			t.Errorf("the second Drive returned before the goroutine the first left running settled")
		}
		close(block)
	})
}

// A call that ends with runtime.Goexit (t.FailNow, say) ends the goroutine
// calling Drive too, as it would have without Drive.
func TestDriveGoexit(t *testing.T) {
	var returned atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = resiliencetest.Drive(clock.NewFake(), time.Second, func() { runtime.Goexit() })
		returned.Store(true)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Drive of a call that called runtime.Goexit did not end after 2s")
	}
	if returned.Load() {
		t.Errorf("Drive returned after its call called runtime.Goexit; want its goroutine ended too")
	}
}

// A goroutine that an earlier Drive counted in is still of the pipeline in
// the next Drive on the same fake, called from another goroutine, even
// when the goroutine that created it (the earlier Drive's caller, which
// ran the fake's AfterFunc callback) is still alive.
func TestDriveKeepsEarlierMembersOfAnotherCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := clock.NewFake()
		gate, block, firstDone, callerExit := make(chan struct{}), make(chan struct{}), make(chan error, 1), make(chan struct{})
		var settled atomic.Bool
		go func() { // the first Drive's caller, alive until the end
			firstDone <- resiliencetest.Drive(fake, time.Second, func() {
				fake.AfterFunc(time.Second, func() {
					go func() { // created by this caller, from the callback
						<-gate
						time.Sleep(time.Second)
						settled.Store(true)
						<-block
					}()
				})
				_ = fake.Sleep(context.Background(), 2*time.Second)
			})
			<-callerExit
		}()
		if err := <-firstDone; err != nil {
			t.Fatalf("first Drive = %v", err)
		}
		close(gate)
		if err := resiliencetest.Drive(fake, time.Second, func() {}); err != nil {
			t.Errorf("second Drive = %v", err)
		}
		if !settled.Load() {
			t.Errorf("the second Drive returned before the first Drive's goroutine settled")
		}
		close(block)
		close(callerExit)
	})
}

// A goroutine created during Drive by a goroutine that existed before it (a
// server the test started) is not of the pipeline: Drive does not wait for
// it.
func TestDriveLeavesOutTheChildrenOfEarlierGoroutines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		trigger, started, block, gone := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
		var settled atomic.Bool
		go func() { // a server, started before Drive
			<-trigger
			go func() {
				defer close(gone)
				close(started)
				time.Sleep(time.Second) // still running when the call returns
				settled.Store(true)
				<-block
			}()
		}()
		err := resiliencetest.Drive(clock.NewFake(), time.Second, func() {
			close(trigger)
			<-started
		})
		if err != nil {
			t.Errorf("Drive = %v", err)
		}
		if settled.Load() {
			t.Errorf("Drive waited for a goroutine that a goroutine older than Drive created")
		}
		close(block)
		<-gone
	})
}
