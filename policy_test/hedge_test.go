package policytest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/hedge"
)

// hedgeAttempt is what one attempt of a generated hedge schedule does.
type hedgeAttempt struct {
	Took     time.Duration
	Fails    bool
	Stubborn bool          // ignores its context
	Hint     time.Duration // if it fails: a Retry-After hint, if >= 0 (resilience.Never included)
}

// pushback is an attempt's error with a Retry-After hint.
type pushback struct {
	error
	after time.Duration
}

func (p pushback) Unwrap() error             { return p.error }
func (p pushback) RetryAfter() time.Duration { return p.after }

type hedgeCase struct {
	Delay     time.Duration
	MaxHedges int
	Attempts  []hedgeAttempt // attempt i does Attempts[i]
	CancelAt  time.Duration  // the caller cancels then, if > 0
}

// hedgeRun is what one call showed.
type hedgeRun struct {
	Starts     []time.Duration // attempt start times
	Ends       []time.Duration // attempt i's return time (-1: never returned)
	Succeeded  []bool          // attempt i returned a success
	MaxRunning int
	Returned   time.Duration // when Do returned
	RunningAt  int           // attempts running when Do returned
	V          int
	Err        error
}

var errHedgeAttempt = errors.New("attempt failed")

func drawHedgeCase(t *rapid.T) hedgeCase {
	c := hedgeCase{
		Delay:     time.Duration(rapid.IntRange(1, 100).Draw(t, "delay ms")) * time.Millisecond,
		MaxHedges: rapid.IntRange(1, 4).Draw(t, "max hedges"),
	}
	c.Attempts = make([]hedgeAttempt, c.MaxHedges+3) // more than may ever start
	for i := range c.Attempts {
		c.Attempts[i] = hedgeAttempt{
			Took:     time.Duration(rapid.IntRange(0, 300).Draw(t, fmt.Sprintf("took %d", i))) * time.Millisecond,
			Fails:    rapid.Bool().Draw(t, fmt.Sprintf("fails %d", i)),
			Stubborn: rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("stubborn %d", i)) == 0,
			Hint:     -1,
		}
		switch rapid.IntRange(0, 9).Draw(t, fmt.Sprintf("hint kind %d", i)) {
		case 0, 1:
			c.Attempts[i].Hint = time.Duration(rapid.IntRange(0, 300).Draw(t, fmt.Sprintf("hint ms %d", i))) * time.Millisecond
		case 2:
			c.Attempts[i].Hint = resilience.Never
		}
	}
	if rapid.Bool().Draw(t, "cancel") {
		c.CancelAt = time.Duration(rapid.IntRange(1, 400).Draw(t, "cancel at ms")) * time.Millisecond
	}
	return c
}

// runHedge runs c through hedge.New on the real clock inside a synctest
// bubble: time is virtual, and synctest.Test fails if any goroutine of the
// call is still alive when the bubble ends.
func runHedge(t *testing.T, c hedgeCase) hedgeRun {
	var r hedgeRun
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		running := 0
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if c.CancelAt > 0 {
			time.AfterFunc(c.CancelAt, cancel)
		}
		p := hedge.New[int](c.Delay, hedge.WithMaxHedges(c.MaxHedges))
		r.V, r.Err = p.Do(ctx, func(ctx context.Context) (int, error) {
			mu.Lock()
			i := len(r.Starts)
			r.Starts = append(r.Starts, time.Since(start))
			r.Ends = append(r.Ends, -1)
			r.Succeeded = append(r.Succeeded, false)
			running++
			r.MaxRunning = max(r.MaxRunning, running)
			mu.Unlock()
			a := c.Attempts[i]
			var err error
			timer := time.NewTimer(a.Took)
			done := ctx.Done()
			if a.Stubborn {
				done = nil
			}
			select {
			case <-timer.C:
				if a.Fails {
					err = fmt.Errorf("attempt %d: %w", i, errHedgeAttempt)
					if a.Hint >= 0 {
						err = pushback{err, a.Hint}
					}
				}
			case <-done:
				timer.Stop()
				err = ctx.Err()
			}
			mu.Lock()
			running--
			r.Ends[i] = time.Since(start)
			r.Succeeded[i] = err == nil
			mu.Unlock()
			return i, err
		})
		mu.Lock()
		r.Returned = time.Since(start)
		r.RunningAt = running
		mu.Unlock()
		time.Sleep(time.Hour) // any attempt started after the call would show now
		synctest.Wait()
	})
	return r
}

// TestHedgeBounds runs random schedules of attempt latencies, failures
// (some with Retry-After hints, "never" included), context-ignoring
// attempts and caller cancellations through hedge.New and checks: at most
// 1+MaxHedges attempts start; none is running when Do returns, none starts
// after it; a hedge starts no later than Delay after the attempt before,
// or the end of a hint if that is later; none starts while a hint of an
// attempt that failed before holds, nor after a "never" hint; the result
// is the first success, if any came before the caller cancelled, else an
// error that wraps every attempt's error.
func TestHedgeBounds(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := drawHedgeCase(rt)
		r := runHedge(t, c)
		n := len(r.Starts)
		if n > 1+c.MaxHedges {
			rt.Fatalf("%d attempts started, more than 1+%d", n, c.MaxHedges)
		}
		if r.RunningAt != 0 {
			rt.Fatalf("%d attempts still running when Do returned", r.RunningAt)
		}
		for i, e := range r.Ends {
			if e < 0 || e > r.Returned {
				rt.Fatalf("attempt %d returned at %v, after Do returned at %v", i, e, r.Returned)
			}
		}
		// The first success, in order of return.
		first := -1
		for i, ok := range r.Succeeded {
			if ok && (first < 0 || r.Ends[i] < r.Ends[first]) {
				first = i
			}
		}
		decided := r.Returned // when the race was decided: a success or the caller's cancellation
		if first >= 0 {
			decided = r.Ends[first]
		}
		if c.CancelAt > 0 && c.CancelAt < decided {
			decided = c.CancelAt
		}
		// hintEnd is the latest end of a hint of an attempt that failed
		// before t; never is whether one of them said "never".
		hintEnd := func(t time.Duration) (end time.Duration, never bool) {
			for j := range n {
				a := c.Attempts[j]
				if r.Succeeded[j] || !a.Fails || a.Hint < 0 || r.Ends[j] >= t || r.Ends[j] < r.Starts[j]+a.Took {
					continue // no hint, or not before t, or cut short (by cancellation) before it failed
				}
				if a.Hint == resilience.Never {
					never = true
					continue
				}
				end = max(end, r.Ends[j]+a.Hint)
			}
			return end, never
		}
		for i := 1; i < n; i++ {
			if r.Starts[i] > decided {
				rt.Fatalf("attempt %d started at %v, after the race was decided at %v", i, r.Starts[i], decided)
			}
			end, never := hintEnd(r.Starts[i])
			if never {
				rt.Fatalf("attempt %d started at %v, after an attempt failed with a \"never\" hint", i, r.Starts[i])
			}
			if r.Starts[i] < end {
				rt.Fatalf("attempt %d started at %v, before the end of a hint at %v", i, r.Starts[i], end)
			}
			if due := max(r.Starts[i-1]+c.Delay, end); r.Starts[i] > due {
				rt.Fatalf("attempt %d started at %v, after it was due at %v (Delay %v after attempt %d at %v, hint end %v)", i, r.Starts[i], due, c.Delay, i-1, r.Starts[i-1], end)
			}
		}
		if end, never := hintEnd(r.Returned + 1); n < 1+c.MaxHedges && !never && first < 0 {
			if due := max(r.Starts[n-1]+c.Delay, end); c.CancelAt == 0 || c.CancelAt > due {
				rt.Fatalf("only %d attempts started, none succeeded, the next was due at %v and the caller did not cancel before", n, due)
			}
		}
		switch {
		case first >= 0 && r.Err == nil:
			if !r.Succeeded[r.V] || r.Ends[r.V] != r.Ends[first] {
				rt.Fatalf("Do returned attempt %d's result (ended %v); the first success was attempt %d at %v", r.V, r.Ends[r.V], first, r.Ends[first])
			}
		case first >= 0:
			rt.Fatalf("attempt %d succeeded, but Do returned %v", first, r.Err)
		case r.Err == nil:
			rt.Fatalf("no attempt succeeded, but Do returned %d, nil", r.V)
		default:
			var multi interface{ Unwrap() []error }
			if !errors.As(r.Err, &multi) {
				rt.Fatalf("err %v does not wrap the attempts' errors", r.Err)
			}
			wrapped := 0
			for _, e := range multi.Unwrap() {
				if errors.Is(e, errHedgeAttempt) || errors.Is(e, context.Canceled) {
					wrapped++
				}
			}
			if wrapped < n {
				rt.Fatalf("err %v wraps %d errors, want at least one per attempt (%d)", r.Err, wrapped, n)
			}
			if c.CancelAt > 0 && c.CancelAt < r.Returned && !errors.Is(r.Err, context.Canceled) {
				rt.Fatalf("the caller cancelled at %v, but err %v does not match context.Canceled", c.CancelAt, r.Err)
			}
		}
	})
}
