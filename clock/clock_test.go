package clock_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// All tests of Real run in a synctest bubble, where time is virtual and
// advances only when every goroutine in the bubble is blocked.

func TestRealIsSingletonAndDoesNotAllocate(t *testing.T) {
	if clock.Real() != clock.Real() {
		t.Fatal("Real() returned different values")
	}
	if n := testing.AllocsPerRun(100, func() { _ = clock.Real() }); n != 0 {
		t.Fatalf("Real() allocates %v times per call", n)
	}
}

func TestRealNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := time.Now()
		got := clock.Real().Now()
		sleep(time.Second) // virtual time
		after := clock.Real().Now()
		if !got.Equal(before) || after.Sub(got) != time.Second {
			t.Fatalf("Now: got %v, before %v, after %v", got, before, after)
		}
	})
}

func TestRealSleepFullDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := clock.Real().Sleep(context.Background(), 3*time.Second); err != nil {
			t.Fatalf("Sleep = %v, want nil", err)
		}
		if got := time.Since(start); got != 3*time.Second {
			t.Fatalf("slept %v, want 3s", got)
		}
	})
}

func TestRealSleepContextEndsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		err := clock.Real().Sleep(ctx, time.Hour)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Sleep = %v, want DeadlineExceeded", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Fatalf("Sleep returned after %v, want 1s", got)
		}
		// The timer was stopped: nothing is left for the bubble to wait on.
		// (synctest.Test would fail if a goroutine were leaked.)
	})
}

func TestRealSleepImmediateCases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dead, cancel := context.WithCancel(context.Background())
		cancel()
		start := time.Now()
		for _, c := range []struct {
			ctx  context.Context
			d    time.Duration
			want error
		}{
			{context.Background(), 0, nil},
			{context.Background(), -time.Second, nil},
			{dead, 0, context.Canceled},
			{dead, time.Hour, context.Canceled},
		} {
			if err := clock.Real().Sleep(c.ctx, c.d); err != c.want {
				t.Errorf("Sleep(d=%v) = %v, want %v", c.d, err, c.want)
			}
		}
		if got := time.Since(start); got != 0 {
			t.Fatalf("immediate Sleeps took %v", got)
		}
	})
}

func TestRealNewTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		tm := clock.Real().NewTimer(2 * time.Second)
		v := <-tm.C()
		if v.Sub(start) != 2*time.Second {
			t.Fatalf("timer fired at +%v, want +2s", v.Sub(start))
		}
		if tm.Stop() {
			t.Fatal("Stop of fired timer = true")
		}
		if tm.Reset(time.Second) {
			t.Fatal("Reset of fired timer = true")
		}
		if !tm.Stop() {
			t.Fatal("Stop of armed timer = false")
		}
		sleep(time.Hour)
		select {
		case <-tm.C():
			t.Fatal("stopped timer fired")
		default:
		}
	})
}

func TestRealStopDiscardsStaleValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := clock.Real().NewTimer(time.Second)
		sleep(2 * time.Second) // fired, value not received
		if !tm.Stop() {
			t.Fatal("Stop with an unreceived value = false, want true (Go 1.23+)")
		}
		select {
		case <-tm.C():
			t.Fatal("stale value received after Stop")
		default:
		}
	})
}

func TestRealAfterFunc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		at := make(chan time.Time, 2)
		tm := clock.Real().AfterFunc(time.Second, func() { at <- time.Now() })
		if tm.C() != nil {
			t.Fatal("AfterFunc timer C() != nil")
		}
		if got := (<-at).Sub(start); got != time.Second {
			t.Fatalf("callback at +%v, want +1s", got)
		}
		if tm.Reset(time.Second) {
			t.Fatal("Reset of fired AfterFunc = true")
		}
		if got := (<-at).Sub(start); got != 2*time.Second {
			t.Fatalf("callback after Reset at +%v, want +2s", got)
		}
		tm.Reset(time.Second)
		if !tm.Stop() {
			t.Fatal("Stop of armed AfterFunc = false")
		}
		sleep(time.Hour)
		synctest.Wait()
		if len(at) != 0 {
			t.Fatal("stopped AfterFunc ran")
		}
	})
}

func TestRealAfterFuncNilPanics(t *testing.T) {
	defer func() {
		if r, _ := recover().(string); r != "clock: AfterFunc with nil func" {
			t.Fatalf("panic = %q", r)
		}
	}()
	clock.Real().AfterFunc(time.Second, nil)
}

// sleep waits d of synctest bubble time using Real().Sleep.
func sleep(d time.Duration) {
	if err := clock.Real().Sleep(context.Background(), d); err != nil {
		panic(err)
	}
}

func TestRealSleepOneNanosecond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := clock.Real().Sleep(context.Background(), 1); err != nil {
			t.Fatalf("Sleep(1ns) = %v, want nil", err)
		}
		if got := time.Since(start); got != 1 {
			t.Fatalf("slept %v, want 1ns", got)
		}
	})
}

// A done context wins even over a timer that would already have expired:
// Sleep does not race the two. This one runs outside a bubble, where a
// timer of 1ns has expired by the time a select could look at it.
func TestRealSleepDoneContextWinsOverAnExpiredTimer(t *testing.T) {
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 200 {
		if err := clock.Real().Sleep(dead, 1); err != context.Canceled {
			t.Fatalf("Sleep %d of 1ns on a done context = %v, want %v", i, err, context.Canceled)
		}
	}
}
