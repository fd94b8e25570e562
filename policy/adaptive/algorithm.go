package adaptive

import (
	"fmt"
	"math"
	"time"
)

// Algorithm decides a [Limiter]'s next limit at the end of each sampling
// window, from the current limit and what the window measured. The three
// of this package are [Gradient2] (the default), [Vegas] and [AIMD]; a
// type of your own that implements Next may be given to [WithAlgorithm].
//
// An Algorithm keeps no state: everything it may use is in its
// arguments, and the Limiter keeps the rest (the limit, as a float64 so
// that small steps add up, and the baseline latency). One value may
// therefore serve any number of limiters at once, and Next is called by
// one goroutine at a time per limiter.
//
// Whatever Next returns, the Limiter applies its guardrails before it
// takes the result: it never lets the limit grow out of a window whose
// calls used less than half of it (demand, not the dependency, set the
// window's latency), nor out of one whose successful calls were none of
// them timed (see [Limiter]); it lowers the limit by at least a tenth after a
// window whose latency was above [Config.MaxLatency], and by at least
// half after a window in which no call finished while calls were in
// flight for all of it; and it keeps the limit in [Min, Max].
type Algorithm interface {
	// Next returns the limit for the next window. limit is the current
	// limit, at least 1; w is the window that just ended.
	Next(limit float64, w Window) float64
}

// Window is what a [Limiter] measured over one sampling window, for its
// [Algorithm].
type Window struct {
	// Latency is the mean latency of the window's successful calls, from
	// admission to Permit.Done (of those timed, when calls come fast: see
	// [Limiter]); 0 when none succeeded.
	Latency time.Duration
	// Baseline is the Limiter's estimate of the dependency's latency
	// without queueing: the lowest window latency of the last
	// [Config.BaselineMemory], never one above [Config.MaxLatency]; a
	// run of windows (with a timed success) below b/1.05, where b is
	// the baseline before the run, lowers it to b/1.05 only, until the
	// run has lasted three windows and 2 × max(Window, 1s) (then to the
	// highest latency of the run). A window offers no less than the
	// windows' latencies averaged over about a second (weighted by their
	// durations), so that the baseline is not the low tail of short
	// windows' noise. 0 until a window has had a timed successful call.
	Baseline time.Duration
	// Successes and Drops count the calls that finished in the window:
	// those that succeeded, and those that failed. Calls that say
	// nothing about the dependency are not counted at all: those
	// cancelled or refused by an inner guard, and those that failed
	// after their caller's context ended (see [Permit.Done]).
	Successes, Drops int
	// MaxInFlight is the most calls in flight at once during the window.
	MaxInFlight int
	// Refused counts the calls the Limiter refused in the window.
	Refused int
	// Duration is how long the window lasted.
	Duration time.Duration
}

// ratio returns Latency/Baseline, or 1 when either is unknown.
func (w Window) ratio() float64 {
	if w.Baseline <= 0 || w.Latency <= 0 {
		return 1
	}
	return float64(w.Latency) / float64(w.Baseline)
}

// Gradient2 adjusts the limit by the gradient between the baseline latency
// and the window's latency, after Netflix concurrency-limits'
// Gradient2Limit (github.com/Netflix/concurrency-limits):
//
//	gradient = clamp(Tolerance × Baseline / Latency, 0.5, 1)
//	gradient = 1:  limit + max(Smoothing × √limit, 1)  (no queueing: grow by a headroom)
//	gradient < 1:  limit × (1 − s × (1 − gradient))
//	               s = Smoothing + (1 − Smoothing) × (1 − gradient) / 0.5
//
// The limit settles where the window's latency is about Tolerance times
// the baseline. A window in which calls failed lowers the gradient to at
// most 1 − (the share of its calls that failed) / 2, and a window with
// failures only uses 0.5. Three departures from Gradient2Limit: the cut
// is smoothed less the deeper the queueing, and not at all at the
// gradient's floor (a window at twice the tolerated latency halves the
// limit), so that an overload is shed within a few windows, not dozens;
// the queue headroom is added only while no queueing is seen (with it
// added on every window, a gradient that sits near 0.8 let the limit
// climb without end: Netflix/concurrency-limits PR 134); and the
// baseline it compares against is the Limiter's, which a long incident
// cannot drift up (failsafe-go issue 127; see [Config.BaselineMemory]).
//
// The zero Gradient2 is the default algorithm of a [Limiter].
type Gradient2 struct {
	// Tolerance is how many times the baseline a window's latency may be
	// before it is read as queueing: at least 1. 0 means 1.1.
	Tolerance float64
	// Smoothing is the share of √limit that a window without queueing
	// adds (one call at least), and of the full cut that a window just over the tolerance
	// applies (more of it the deeper the queueing), in (0, 1]. 0 means
	// 0.2.
	Smoothing float64
}

// Next implements [Algorithm].
func (g Gradient2) Next(limit float64, w Window) float64 {
	tol, s := or(g.Tolerance, defaultTolerance), or(g.Smoothing, 0.2)
	calls := w.Successes + w.Drops
	if calls == 0 {
		return limit
	}
	grad := 0.5
	if w.Successes > 0 {
		grad = min(max(tol/w.ratio(), 0.5), 1)
	}
	if w.Drops > 0 {
		grad = min(grad, 1-float64(w.Drops)/float64(calls)/2)
	}
	if grad >= 1 {
		return limit + max(s*math.Sqrt(limit), 1)
	}
	// The deeper the queueing, the less the cut is smoothed: all of it
	// at the gradient's floor, 0.5.
	s += (1 - s) * (1 - grad) / 0.5
	return limit * (1 - s*(1-grad))
}

// Vegas adjusts the limit by an estimate of the calls queued at the
// dependency, after TCP Vegas (Brakmo and Peterson, 1995) as Netflix
// concurrency-limits' VegasLimit applies it:
//
//	queue = limit × (1 − Baseline / Latency)
//	queue ≤ alpha/2:     limit + 2·log   (no queue: grow fast)
//	queue < alpha:       limit + log
//	queue > beta:        limit − queue + (alpha + beta)/2
//	otherwise:           limit
//
// where log is log10(limit), at least 1, alpha is min(3·log, limit/15), at
// least 1, and beta is 2·alpha. limit − queue is what the dependency
// serves without queueing, so a window over beta drops the excess at
// once, keeping the middle of [alpha, beta] queued. VegasLimit's alpha
// and beta, 3·log and 6·log, hold small limits far above the capacity (a
// queue of 3 to 6 on a dependency that serves 8 at once); they are kept
// for large limits. A window with failures lowers the limit by log. The
// baseline is the Limiter's (see [Window].Baseline).
type Vegas struct{}

// Next implements [Algorithm].
func (Vegas) Next(limit float64, w Window) float64 {
	lg := max(math.Log10(limit), 1)
	switch {
	case w.Drops > 0:
		return limit - lg
	case w.Successes == 0:
		return limit
	}
	alpha := min(3*lg, max(1, limit/15))
	beta := 2 * alpha
	queue := limit * (1 - 1/w.ratio())
	switch {
	case queue <= alpha/2:
		return limit + 2*lg
	case queue < alpha:
		return limit + lg
	case queue > beta:
		// Drop what is queued over the middle of [alpha, beta] at once:
		// limit − queue is what the dependency serves without queueing.
		return limit - queue + (alpha+beta)/2
	}
	return limit
}

// AIMD grows the limit by one per window and cuts it by a factor when the
// window shows congestion, as TCP Reno does with its window and Netflix
// concurrency-limits' AIMDLimit with a concurrency limit: a window is
// congested when a call in it failed or its latency was above Tolerance
// times the baseline. A latency of ratio times the baseline, above the
// tolerance, cuts the limit to limit × min(Backoff, Tolerance / ratio),
// at most by half: queueing deeper than one backoff undoes is shed at
// once.
type AIMD struct {
	// Tolerance is how many times the baseline a window's latency may be
	// before it reads as congestion: at least 1. 0 means 1.1.
	Tolerance float64
	// Backoff is the factor a congested window multiplies the limit by,
	// in (0, 1). 0 means 0.9.
	Backoff float64
}

// Next implements [Algorithm].
func (a AIMD) Next(limit float64, w Window) float64 {
	tol, backoff := or(a.Tolerance, defaultTolerance), or(a.Backoff, 0.9)
	switch {
	case w.Drops > 0:
		return limit * backoff
	case w.Successes > 0 && w.ratio() > tol:
		// Queueing deeper than the backoff undoes is cut to the
		// tolerance at once: limit × Tolerance / ratio.
		return limit * min(backoff, max(tol/w.ratio(), 0.5))
	case w.Successes > 0:
		return limit + 1
	}
	return limit
}

// defaultTolerance is the default Tolerance of Gradient2 and AIMD.
const defaultTolerance = 1.1

// or returns v, or def when v is 0.
func or(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// validateAlgorithm checks the parameters of this package's algorithms;
// an Algorithm of another type is the caller's to check.
func validateAlgorithm(a Algorithm) error {
	bad := func(field string, v float64, want string) error {
		return fmt.Errorf("adaptive: Algorithm %s must be %s, got %v", field, want, v)
	}
	switch a := a.(type) {
	case Gradient2:
		if t := a.Tolerance; t != 0 && !(t >= 1 && t <= math.MaxFloat64) {
			return bad("Gradient2.Tolerance", t, "finite and >= 1, or 0 for the default 1.1")
		}
		if s := a.Smoothing; s != 0 && !(s > 0 && s <= 1) {
			return bad("Gradient2.Smoothing", s, "in (0, 1], or 0 for the default 0.2")
		}
	case AIMD:
		if t := a.Tolerance; t != 0 && !(t >= 1 && t <= math.MaxFloat64) {
			return bad("AIMD.Tolerance", t, "finite and >= 1, or 0 for the default 1.1")
		}
		if b := a.Backoff; b != 0 && !(b > 0 && b < 1) {
			return bad("AIMD.Backoff", b, "in (0, 1), or 0 for the default 0.9")
		}
	}
	return nil
}
