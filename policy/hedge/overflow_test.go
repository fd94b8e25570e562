package hedge_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/hedge"
)

// failFirst returns an op whose first n attempts fail at once with errA
// and whose later attempts return their index; *calls counts the attempts.
// Attempts after a failure start at once, so they run one after another.
func failFirst(n int, calls *int, then func()) func(context.Context) (int, error) {
	return func(context.Context) (int, error) {
		i := *calls
		*calls++
		if i < n {
			if i == n-1 && then != nil {
				then()
			}
			return 0, errA
		}
		return i, nil
	}
}

// Regression: the policy kept 1+MaxHedges attempts, which overflows at
// MaxHedges = math.MaxInt, and the first failure made an error slice of
// that length: makeslice panicked while holding the race's lock.
func TestMaxHedgesMaxIntDoesNotOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedge.New[int](time.Hour, hedge.WithMaxHedges(math.MaxInt), hedge.WithClock(clock.NewFake()))
		calls := 0
		v, err := func() (v int, err error) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("Do panicked: %v", r)
				}
			}()
			return p.Do(context.Background(), failFirst(5, &calls, nil))
		}()
		if v != 5 || err != nil || calls != 6 {
			t.Errorf("Do = %d, %v after %d attempts; want 5, nil after 6", v, err, calls)
		}

		// Every attempt fails; the caller gives up during the third.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		calls = 0
		_, err = p.Do(ctx, failFirst(3, &calls, cancel))
		if want := "hedge: context canceled after 3 attempts: a failed; a failed; a failed"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %q", err, want)
		}
		if !errors.Is(err, context.Canceled) || !errors.Is(err, errA) {
			t.Errorf("err = %v, want it to match context.Canceled and the attempts' error", err)
		}
	})
}

// Regression: every failing call made an error slice of 1+MaxHedges
// entries, 16 MB at MaxHedges = 1<<20, however few attempts it started.
func TestFailureAllocatesByAttemptsStarted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hedge.New[int](time.Hour, hedge.WithMaxHedges(1<<20), hedge.WithClock(clock.NewFake()))
		calls := 0
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		v, err := p.Do(context.Background(), failFirst(2, &calls, nil))
		runtime.ReadMemStats(&after)
		if v != 2 || err != nil {
			t.Errorf("Do = %d, %v; want 2, nil", v, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
			t.Errorf("a call of 3 attempts allocated %d bytes, want at most 64 KiB", got)
		}
	})
}
