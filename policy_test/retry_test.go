package policytest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// attemptSpec is what one attempt of a generated schedule does.
type attemptSpec struct {
	Took      time.Duration // time the attempt takes
	Fails     bool
	Hint      time.Duration // Retry-After hint of the failure, if > 0; resilience.Never = no retry will do
	Permanent bool          // the failure is marked resilience.Permanent
}

// cancelSpec is when the caller's context is cancelled, if ever: during
// attempt N (at its end), or during the wait after attempt N, After into it.
type cancelSpec struct {
	Never  bool
	N      int
	InWait bool
	After  time.Duration
}

// retryCase is one generated execution.
type retryCase struct {
	Attempts   int // as given to WithAttempts: 0 = the default (3), resilience.Off = no limit
	MaxElapsed time.Duration
	MaxWait    time.Duration // as given to WithMaxWait: 0 = the default, resilience.Off = no cap
	Deadline   time.Duration // the caller's deadline, from the start, if > 0
	Backoff    backoff.Schedule
	Seed       uint64
	Ops        []attemptSpec
	Cancel     cancelSpec
}

// retryTrace is everything observable about one execution.
type retryTrace struct {
	Starts  []time.Duration // attempt start times, from the execution's start
	Waits   []time.Duration // waits asked of the clock
	Hooks   []time.Duration // delays passed to OnRetry
	V       int
	Outcome string // "ok", "as is" (not a *retry.Error), "exhausted N", "elapsed N", "maxwait N", "canceled N", "deadline N"
}

var errAttempt = errors.New("attempt failed")

type hintErr struct{ d time.Duration }

func (h hintErr) Error() string             { return fmt.Sprintf("retry after %v", h.d) }
func (h hintErr) RetryAfter() time.Duration { return h.d }

func (s attemptSpec) err() error {
	var err error = errAttempt
	if s.Hint > 0 {
		err = hintErr{s.Hint}
	}
	if s.Permanent {
		err = resilience.Permanent(err)
	}
	return err
}

func drawDuration(t *rapid.T, label string, maxMs int) time.Duration {
	return time.Duration(rapid.IntRange(0, maxMs).Draw(t, label)) * time.Millisecond
}

func drawSchedule(t *rapid.T) backoff.Schedule {
	base := drawDuration(t, "base", 500)
	maxD := base + drawDuration(t, "cap extra", 3000)
	var s backoff.Schedule
	switch rapid.IntRange(0, 2).Draw(t, "kind") {
	case 0:
		s = backoff.Constant(base)
	case 1:
		step := drawDuration(t, "step", 500)
		if base == 0 && step == 0 {
			maxD = 0 // a cap above 0 with no growth from 0 is refused
		}
		s = backoff.Linear(base, step, maxD)
	default:
		if base == 0 {
			maxD = 0 // growth from 0 stays 0: a cap above 0 is refused
		}
		s = backoff.Exponential(base, rapid.Float64Range(1, 3).Draw(t, "mult"), maxD)
	}
	j := backoff.Jitter(rapid.IntRange(0, 3).Draw(t, "jitter"))
	if j == backoff.Decorrelated && base == 0 && s.Max() > 0 {
		j = backoff.Full // Decorrelated grows from base: base 0 is refused
	}
	return s.WithJitter(j)
}

func drawRetryCase(t *rapid.T) retryCase {
	c := retryCase{
		Attempts:   rapid.IntRange(resilience.Off, 6).Draw(t, "attempts"),
		MaxElapsed: drawDuration(t, "max elapsed", 10000),
		Backoff:    drawSchedule(t),
		Seed:       rapid.Uint64().Draw(t, "seed"),
	}
	switch rapid.IntRange(0, 3).Draw(t, "max wait kind") {
	case 0: // the default
	case 1:
		c.MaxWait = resilience.Off
	default:
		c.MaxWait = drawDuration(t, "max wait", 6000) + time.Millisecond
	}
	if rapid.Bool().Draw(t, "deadline") {
		c.Deadline = drawDuration(t, "deadline after", 10000) + time.Millisecond
	}
	if c.Attempts == resilience.Off && c.MaxElapsed == 0 {
		c.MaxElapsed = time.Second
	}
	if c.Attempts == resilience.Off && c.Backoff.Max() == 0 {
		c.Backoff = backoff.Constant(100 * time.Millisecond)
	}
	c.Ops = rapid.SliceOfN(rapid.Custom(func(t *rapid.T) attemptSpec {
		s := attemptSpec{Took: drawDuration(t, "took", 1000), Fails: rapid.IntRange(0, 3).Draw(t, "fails") > 0}
		if s.Fails {
			if rapid.Bool().Draw(t, "hinted") {
				s.Hint = drawDuration(t, "hint", 5000) + time.Millisecond
				if rapid.IntRange(0, 4).Draw(t, "long hint") == 0 {
					s.Hint += 10 * time.Second // past the default MaxWait's floor
				}
				if rapid.IntRange(0, 9).Draw(t, "never") == 0 {
					s.Hint = resilience.Never
				}
			}
			s.Permanent = rapid.IntRange(0, 9).Draw(t, "permanent") == 0
		}
		return s
	}), 0, 12).Draw(t, "ops")
	c.Cancel = cancelSpec{Never: rapid.Bool().Draw(t, "never cancel")}
	if !c.Cancel.Never {
		c.Cancel.N = rapid.IntRange(1, 12).Draw(t, "cancel attempt")
		c.Cancel.InWait = rapid.Bool().Draw(t, "cancel in wait")
		c.Cancel.After = drawDuration(t, "cancel after", 3000)
	}
	return c
}

// op returns what attempt n (from 1) of c does; past the schedule, it
// succeeds at once.
func (c retryCase) op(n int) attemptSpec {
	if n > len(c.Ops) {
		return attemptSpec{}
	}
	return c.Ops[n-1]
}

// timeline is a clock for one execution: Now and Sleep run on a fake
// clock, and Sleep does not block: it records the wait and moves the time
// by it, or by part of it when the case cancels the context there. A
// caller's deadline that the time reaches ends the context (it is a
// timeout on the same fake clock), so Sleep then returns its error.
type timeline struct {
	*clock.Fake
	c      retryCase
	cancel context.CancelFunc
	start  time.Time
	tr     *retryTrace
	// violations of "never sleeps after cancellation"
	sleptAfterCancel int
}

func (tl *timeline) Sleep(ctx context.Context, d time.Duration) error {
	if ctx.Err() != nil {
		tl.sleptAfterCancel++
		return ctx.Err()
	}
	tl.tr.Waits = append(tl.tr.Waits, d)
	n := len(tl.tr.Waits) // wait n follows attempt n
	if cs := tl.c.Cancel; !cs.Never && cs.InWait && cs.N == n && cs.After < d {
		tl.Advance(cs.After)
		tl.cancel()
		return ctx.Err()
	}
	tl.Advance(d)
	return ctx.Err()
}

// runRetry runs c through the library.
func runRetry(c retryCase) (retryTrace, int) {
	var tr retryTrace
	tl := &timeline{Fake: clock.NewFake(), c: c, tr: &tr}
	tl.start = tl.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tl.cancel = cancel
	p := retry.New[int](
		// A Config's zero fields are the defaults (an option's 0 panics).
		retry.WithConfig(retry.Config{Attempts: c.Attempts, MaxElapsed: c.MaxElapsed, MaxWait: c.MaxWait,
			Backoff: c.Backoff.WithRand(rand.New(rand.NewPCG(c.Seed, 0)))}),
		retry.WithClock(tl),
		retry.WithOnRetry(func(_ int, _ error, d time.Duration) { tr.Hooks = append(tr.Hooks, d) }),
	)
	if c.Deadline > 0 {
		p = resilience.Then(timeout.New[int](c.Deadline, timeout.WithClock(tl.Fake)), p)
	}
	v, err := p.Do(ctx, func(context.Context) (int, error) {
		n := len(tr.Starts) + 1
		tr.Starts = append(tr.Starts, tl.Now().Sub(tl.start))
		s := c.op(n)
		tl.Advance(s.Took)
		if cs := c.Cancel; !cs.Never && !cs.InWait && cs.N == n {
			cancel()
		}
		if !s.Fails {
			return n, nil
		}
		return n, s.err()
	})
	tr.V = v
	tr.Outcome = classify(err)
	return tr, tl.sleptAfterCancel
}

// classify names the outcome of an execution from its error, by the
// retry.Error's Reason.
func classify(err error) string {
	var re *retry.Error
	if err == nil {
		return "ok"
	}
	if !errors.As(err, &re) {
		return "as is"
	}
	why := map[error]string{
		retry.ErrAttempts:        "exhausted",
		retry.ErrMaxElapsed:      "elapsed",
		retry.ErrMaxWait:         "maxwait",
		retry.ErrBudgetExhausted: "budget",
		context.Canceled:         "canceled",
		context.DeadlineExceeded: "deadline",
	}[re.Reason]
	if why == "" {
		why = fmt.Sprintf("reason %v", re.Reason)
	}
	return fmt.Sprintf("%s %d", why, re.Attempts)
}

// attempts returns the most attempts of c, 0 for no limit.
func (c retryCase) attempts() int {
	switch c.Attempts {
	case 0:
		return 3
	case resilience.Off:
		return 0
	}
	return c.Attempts
}

// maxWait returns the longest wait of c, resilience.Never for no cap.
func (c retryCase) maxWait() time.Duration {
	switch c.MaxWait {
	case 0:
		return max(c.Backoff.Max(), 10*time.Second)
	case resilience.Off:
		return resilience.Never
	}
	return c.MaxWait
}

// modelRetry is the documented behaviour of retry.New, as a plain loop.
func modelRetry(c retryCase) retryTrace {
	var tr retryTrace
	seq := c.Backoff.WithRand(rand.New(rand.NewPCG(c.Seed, 0))).Start()
	var now time.Duration
	for n := 1; ; n++ {
		tr.Starts = append(tr.Starts, now)
		s := c.op(n)
		now += s.Took
		tr.V = n
		expired := c.Deadline > 0 && now >= c.Deadline // the deadline came during the attempt
		canceled := !c.Cancel.Never && !c.Cancel.InWait && c.Cancel.N == n
		switch {
		case !s.Fails:
			tr.Outcome = "ok"
			return tr
		case s.Permanent || s.Hint == resilience.Never:
			tr.Outcome = "as is"
			return tr
		case expired:
			tr.Outcome = fmt.Sprintf("deadline %d", n)
			return tr
		case canceled:
			tr.Outcome = fmt.Sprintf("canceled %d", n)
			return tr
		case n == c.attempts():
			tr.Outcome = fmt.Sprintf("exhausted %d", n)
			return tr
		}
		if s.Hint > c.maxWait() {
			tr.Outcome = fmt.Sprintf("maxwait %d", n)
			return tr
		}
		wait := max(min(seq.Next(), c.maxWait()), s.Hint)
		if c.MaxElapsed > 0 && now+wait > c.MaxElapsed {
			tr.Outcome = fmt.Sprintf("elapsed %d", n)
			return tr
		}
		if c.Deadline > 0 && now+wait >= c.Deadline {
			tr.Outcome = fmt.Sprintf("deadline %d", n)
			return tr
		}
		tr.Hooks = append(tr.Hooks, wait)
		tr.Waits = append(tr.Waits, wait)
		if !c.Cancel.Never && c.Cancel.InWait && c.Cancel.N == n && c.Cancel.After < wait {
			tr.Outcome = fmt.Sprintf("canceled %d", n)
			return tr
		}
		now += wait
	}
}

// TestRetryMatchesModel runs random schedules of failures, hints, permanent
// errors and cancellations through retry.New and compares everything
// observable with the model: attempt start times, waits, hook calls, result
// and outcome. It also checks the bounds directly.
func TestRetryMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawRetryCase(t)
		got, sleptAfterCancel := runRetry(c)
		if diff := cmp.Diff(modelRetry(c), got); diff != "" {
			t.Fatalf("trace mismatch (-model +library):\n%s", diff)
		}
		checkRetryBounds(t, c, got, sleptAfterCancel)
	})
}

// checkRetryBounds checks the retry's bounds on a trace, independently
// of the model.
func checkRetryBounds(t *rapid.T, c retryCase, tr retryTrace, sleptAfterCancel int) {
	if n := c.attempts(); n > 0 && len(tr.Starts) > n {
		t.Fatalf("%d attempts, more than %d", len(tr.Starts), n)
	}
	if sleptAfterCancel > 0 {
		t.Fatalf("Sleep called %d times after cancellation", sleptAfterCancel)
	}
	var now time.Duration
	for i, w := range tr.Waits {
		now = tr.Starts[i] + c.op(i+1).Took + w
		if c.MaxElapsed > 0 && now > c.MaxElapsed {
			t.Fatalf("wait %d ends at %v, past MaxElapsed %v", i+1, now, c.MaxElapsed)
		}
		if c.Deadline > 0 && now >= c.Deadline {
			t.Fatalf("wait %d ends at %v, not before the caller's deadline %v", i+1, now, c.Deadline)
		}
		hint := c.op(i + 1).Hint
		if hint == resilience.Never {
			t.Fatalf("wait %d after a hint of never", i+1)
		}
		if w < hint || w > max(c.Backoff.Max(), hint) {
			t.Fatalf("wait %d = %v, outside [hint %v, max(backoff max %v, hint)]", i+1, w, hint, c.Backoff.Max())
		}
		if w > c.maxWait() {
			t.Fatalf("wait %d = %v, past MaxWait %v", i+1, w, c.maxWait())
		}
	}
	for i, s := range tr.Starts {
		if c.MaxElapsed > 0 && s > c.MaxElapsed {
			t.Fatalf("attempt %d starts at %v, past MaxElapsed %v", i+1, s, c.MaxElapsed)
		}
	}
}

// TestRetryZeroWaitPastMaxElapsed is a schedule rapid found: an attempt
// that itself ran past MaxElapsed, followed by a wait of 0, must stop with
// the MaxElapsed reason (the error's message used to omit it when the wait
// was 0; it now says the attempts used MaxElapsed up).
func TestRetryZeroWaitPastMaxElapsed(t *testing.T) {
	c := retryCase{
		Attempts:   resilience.Off,
		MaxElapsed: time.Millisecond,
		Backoff:    backoff.Linear(0, time.Millisecond, time.Millisecond), // first wait 0
		Ops:        []attemptSpec{{Took: 2 * time.Millisecond, Fails: true}},
		Cancel:     cancelSpec{Never: true},
	}
	got, _ := runRetry(c)
	if diff := cmp.Diff(modelRetry(c), got); diff != "" {
		t.Fatalf("trace mismatch (-model +library):\n%s", diff)
	}
	if got.Outcome != "elapsed 1" {
		t.Errorf("outcome %q, want elapsed 1", got.Outcome)
	}
}

// budgetEvent is one step of a budget schedule: time passes, then an
// execution starts that fails Fails times in a row (then succeeds).
type budgetEvent struct {
	Gap   time.Duration
	Fails int
}

// TestRetryBudgetBounds runs random schedules of executions through retry
// policies sharing a Budget and checks, at every retry asked for at time t,
// against the counts of the schedule itself:
//
//   - granted: retries granted in [t-0.9W, t], this one included, are at
//     most Ratio × executions in (t-W, t] + MinPerSecond × W;
//   - denied only when over: a retry is granted whenever retries granted in
//     (t-W, t] plus one are at most Ratio × executions in [t-0.9W, t] +
//     MinPerSecond × W.
//
// (The window slides in steps of W/10, so it covers at least the last 0.9W
// and at most the last W.)
func TestRetryBudgetBounds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		window := time.Duration(rapid.IntRange(1, 100).Draw(t, "window/10ms")) * 10 * time.Millisecond
		cfg := retry.BudgetConfig{ // the values the bounds use; 0 means none
			Ratio:        float64(rapid.IntRange(0, 10).Draw(t, "ratio×10")) / 10,
			MinPerSecond: float64(rapid.IntRange(0, 20).Draw(t, "min/s")),
			Window:       window,
		}
		if cfg.Ratio == 0 && cfg.MinPerSecond == 0 {
			cfg.Ratio = 0.5
		}
		given := cfg // as given to NewBudget: none is Off (0 would be the default)
		if given.Ratio == 0 {
			given.Ratio = resilience.Off
		}
		if given.MinPerSecond == 0 {
			given.MinPerSecond = resilience.Off
		}
		events := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) budgetEvent {
			return budgetEvent{
				Gap:   time.Duration(rapid.Int64Range(0, int64(window/3)).Draw(t, "gap")),
				Fails: rapid.IntRange(0, 4).Draw(t, "fails"),
			}
		}), 1, 60).Draw(t, "events")

		clk := clock.NewFake()
		start := clk.Now()
		given.Clock = clk
		b := retry.NewBudget(given)
		reserve := cfg.MinPerSecond * window.Seconds()
		var calls, grants []time.Duration // times of executions and granted retries
		count := func(ts []time.Duration, from time.Duration, incl bool, to time.Duration) int {
			n := 0
			for _, x := range ts {
				if (x > from || incl && x == from) && x <= to {
					n++
				}
			}
			return n
		}
		for i, ev := range events {
			clk.Advance(ev.Gap)
			now := clk.Now().Sub(start)
			calls = append(calls, now)
			var asked, granted int
			p := retry.New[int](retry.WithBudget(b), retry.WithAttempts(5), retry.WithBackoff(backoff.Constant(0)),
				retry.WithClock(clk),
				retry.WithOnRetry(func(int, error, time.Duration) { granted++ }))
			n := 0
			_, err := p.Do(context.Background(), func(context.Context) (int, error) {
				if n++; n <= ev.Fails {
					if n < 5 {
						asked++
					}
					return 0, errAttempt
				}
				return n, nil
			})
			denied := errors.Is(err, retry.ErrBudgetExhausted)
			if denied != (granted < asked) || (denied && granted != asked-1) {
				t.Fatalf("event %d: %d retries asked, %d granted, err %v", i, asked, granted, err)
			}
			for range granted {
				grants = append(grants, now)
				inShort := count(grants, now-window*9/10, true, now)
				if float64(inShort) > cfg.Ratio*float64(count(calls, now-window, false, now))+reserve {
					t.Fatalf("event %d at %v: %d retries granted in the last 0.9W, over the budget", i, now, inShort)
				}
			}
			if denied {
				inLong := count(grants, now-window, false, now)
				if float64(inLong+1) <= cfg.Ratio*float64(count(calls, now-window*9/10, true, now))+reserve {
					t.Fatalf("event %d at %v: retry denied with %d retries in the window, within the budget", i, now, inLong)
				}
			}
		}
	})
}
