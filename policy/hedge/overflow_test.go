package hedge_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
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

// Regression: WithMaxHedges(1000) turned one call to a dependency that
// fails at once into 1001 calls within a millisecond (each failure starts
// the next attempt at once). MaxHedges is bounded by MaxHedgesLimit: a call
// makes at most 11 attempts, and a larger MaxHedges is refused, by the
// option and by Validate alike.
func TestMaxHedgesIsBounded(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		p := hedge.New[int](time.Hour, hedge.WithMaxHedges(hedge.MaxHedgesLimit), hedge.WithClock(clock.NewFake()))
		calls := 0
		v, err := p.Do(context.Background(), failFirst(100, &calls, nil))
		if calls != hedge.MaxHedgesLimit+1 || err == nil || v != 0 {
			t.Errorf("Do = %d, %v after %d attempts; want an error after %d", v, err, calls, hedge.MaxHedgesLimit+1)
		}
		if !errors.Is(err, errA) {
			t.Errorf("err = %v, want it to match the attempts' error", err)
		}
	})
	for _, n := range []int{hedge.MaxHedgesLimit + 1, 1000, math.MaxInt} {
		want := fmt.Sprintf("hedge: WithMaxHedges(%d): the hedges must be in [1, 10]; leave the option out for the default, 1", n)
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			hedge.WithMaxHedges(n)
			return "no panic"
		}()
		if got != want {
			t.Errorf("WithMaxHedges(%d) panicked with %q, want %q", n, got, want)
		}
	}
}
