package policytest

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	Refused  bool          // if it fails: an inner guard's refusal (with Hint, if >= 0)
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
	MaxWait   time.Duration  // 0: the default (Delay); resilience.Off: no cap
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

// errGuard is the sentinel of a generated guard's refusal.
var errGuard = fmt.Errorf("guard: refused: %w", resilience.ErrRefused)

// maxWait is the longest hint c's policy waits for.
func (c hedgeCase) maxWait() time.Duration {
	switch c.MaxWait {
	case 0:
		return c.Delay
	case resilience.Off:
		return resilience.Never - 1 // every hint but "never"
	}
	return c.MaxWait
}

func drawHedgeCase(t *rapid.T) hedgeCase {
	c := hedgeCase{
		Delay:     time.Duration(rapid.IntRange(1, 100).Draw(t, "delay ms")) * time.Millisecond,
		MaxHedges: rapid.IntRange(1, 4).Draw(t, "max hedges"),
	}
	switch rapid.IntRange(0, 3).Draw(t, "max wait kind") {
	case 1:
		c.MaxWait = resilience.Off
	case 2:
		c.MaxWait = time.Duration(rapid.IntRange(1, 300).Draw(t, "max wait ms")) * time.Millisecond
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
		case 3:
			c.Attempts[i].Refused = true
			if rapid.Bool().Draw(t, fmt.Sprintf("refusal hinted %d", i)) {
				c.Attempts[i].Hint = time.Duration(rapid.IntRange(0, 300).Draw(t, fmt.Sprintf("refusal hint ms %d", i))) * time.Millisecond
			}
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
		p := hedge.New[int](c.Delay, hedge.WithConfig(hedge.Config[int]{MaxHedges: c.MaxHedges, MaxWait: c.MaxWait})) // MaxWait 0: the default
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
					switch {
					case a.Refused:
						err = fmt.Errorf("%w: %w", err, resilience.Refuse(errGuard, "guard", a.Hint))
					case a.Hint >= 0:
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
// (some with Retry-After hints, "never" included, some refusals of an
// inner guard, with or without a hint), context-ignoring attempts, caller
// cancellations and MaxWait (the default, Off, or a duration) through
// hedge.New and checks: at most 1+MaxHedges attempts start; none is
// running when Do returns, none starts after it; a hedge starts no later
// than Delay after the attempt before, or the end of a hint if that is
// later; none starts while a hint (of at most MaxWait) of an attempt that
// failed before holds, nor after a hint past MaxWait (a "never" included)
// or a refusal; Do returns when its last attempt does, or when the caller
// cancels a wait for a hint: a hint never holds a call longer than
// MaxWait after the failure; the result is the first success, if any came
// before the caller cancelled, else an error that wraps every attempt's
// error.
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
		// hintEnd is the latest end of a hint (one the policy waits for) of
		// an attempt that failed before t; stop is whether one of them
		// stopped further attempts: a refusal, or a hint past MaxWait
		// ("never" included).
		hintEnd := func(t time.Duration) (end time.Duration, stop bool) {
			for j := range n {
				a := c.Attempts[j]
				if r.Succeeded[j] || !a.Fails || r.Ends[j] >= t || r.Ends[j] < r.Starts[j]+a.Took {
					continue // not a failure before t, or cut short (by cancellation) before it failed
				}
				switch {
				case a.Refused || a.Hint > c.maxWait():
					stop = true
				case a.Hint >= 0:
					end = max(end, r.Ends[j]+a.Hint)
				}
			}
			return end, stop
		}
		for i := 1; i < n; i++ {
			if r.Starts[i] > decided {
				rt.Fatalf("attempt %d started at %v, after the race was decided at %v", i, r.Starts[i], decided)
			}
			end, stop := hintEnd(r.Starts[i])
			if stop {
				rt.Fatalf("attempt %d started at %v, after an attempt was refused or failed with a hint past MaxWait %v", i, r.Starts[i], c.maxWait())
			}
			if r.Starts[i] < end {
				rt.Fatalf("attempt %d started at %v, before the end of a hint at %v", i, r.Starts[i], end)
			}
			if due := max(r.Starts[i-1]+c.Delay, end); r.Starts[i] > due {
				rt.Fatalf("attempt %d started at %v, after it was due at %v (Delay %v after attempt %d at %v, hint end %v)", i, r.Starts[i], due, c.Delay, i-1, r.Starts[i-1], end)
			}
		}
		lastEnd := slices.Max(r.Ends)
		if r.Returned != lastEnd && (c.CancelAt == 0 || r.Returned != c.CancelAt) {
			rt.Fatalf("Do returned at %v, neither when its last attempt returned (%v) nor when the caller cancelled (at %v)", r.Returned, lastEnd, c.CancelAt)
		}
		if end, stop := hintEnd(r.Returned + 1); n < 1+c.MaxHedges && !stop && first < 0 {
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
