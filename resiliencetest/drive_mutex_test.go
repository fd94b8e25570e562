package resiliencetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
)

// A goroutine of the pipeline waiting for a mutex is blocked when its
// holder waits on the fake: Drive moves the clock. The call holds a mutex
// across a 3s wait on the fake while a goroutine it started waits for
// the mutex, then waits 2s in turn. Drive returns within 2s of the test's
// own wall-clock time (a bound for failure only; Drive would give up with
// ErrStuck after DriveTimeout).
func TestDriveMovesTheClockWhileAGoroutineWaitsForAMutex(t *testing.T) {
	fake := clock.NewFake()
	start := fake.Now()
	var mu sync.Mutex
	var took []time.Duration // by the call, then by the goroutine, under mu
	done := make(chan error, 1)
	go func() {
		done <- Drive(fake, time.Second, func() {
			mu.Lock()
			var wg sync.WaitGroup
			wg.Go(func() {
				mu.Lock()
				defer mu.Unlock()
				_ = fake.Sleep(context.Background(), 2*time.Second)
				took = append(took, fake.Now().Sub(start))
			})
			_ = fake.Sleep(context.Background(), 3*time.Second)
			took = append(took, fake.Now().Sub(start))
			mu.Unlock()
			wg.Wait()
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Drive = %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Drive did not return after 2s of wall-clock time")
	}
	if diff := cmp.Diff([]time.Duration{3 * time.Second, 5 * time.Second}, took); diff != "" {
		t.Errorf("the waits' ends on the fake mismatch (-want +got):\n%s", diff)
	}
}
