package resilience

import (
	"math"
	"strconv"
	"time"
)

// Bounds is the worst case of one call through a policy, as
// [Policy.Bounds] works it out from its layers' settings.
type Bounds struct {
	// Calls is the most times one call runs the op (calls the
	// dependency); 0 when CallsUnbounded says why there is no bound.
	Calls int
	// Duration is the longest one call takes, from its start to its
	// return; 0 when DurationUnbounded says why there is no bound.
	Duration time.Duration
	// CallsUnbounded and DurationUnbounded say why a bound is missing,
	// naming the layer; each is empty when its bound exists.
	CallsUnbounded, DurationUnbounded string
}

// String returns the bounds on one line, e.g. "at most 3 calls in at most
// 2.2s", or says why a bound is missing.
func (b Bounds) String() string {
	s := "at most " + strconv.Itoa(b.Calls) + " calls"
	if b.CallsUnbounded != "" {
		s = "unbounded calls (" + b.CallsUnbounded + ")"
	}
	if b.DurationUnbounded != "" {
		return s + ", unbounded duration (" + b.DurationUnbounded + ")"
	}
	return s + " in at most " + b.Duration.String()
}

// bound is a count or a duration, or none with the reason why.
type bound struct {
	n    int64
	none string // why there is no bound; "" when n is one
}

func unbounded(why string) bound { return bound{none: why} }

// add returns a + b; none if either is, or on overflow.
func add(a, b bound) bound {
	switch {
	case a.none != "":
		return a
	case b.none != "":
		return b
	case a.n > math.MaxInt64-b.n:
		return unbounded("longer than " + time.Duration(math.MaxInt64).String())
	}
	return bound{n: a.n + b.n}
}

// mul returns k × a for k >= 0.
func mul(k int64, a bound) bound {
	switch {
	case k == 0:
		return bound{}
	case a.none != "":
		return a
	case a.n > math.MaxInt64/k:
		return unbounded("more than " + strconv.FormatInt(math.MaxInt64, 10))
	}
	return bound{n: k * a.n}
}

// least returns the smaller of a and b; none only if both are (then a's
// reason).
func least(a, b bound) bound {
	switch {
	case a.none != "":
		if b.none != "" {
			return a
		}
		return b
	case b.none != "":
		return a
	}
	return bound{n: min(a.n, b.n)}
}

// wait returns d as a bound, Off meaning none with the reason why.
func wait(d time.Duration, why string) bound {
	if d == Off || d == Never {
		return unbounded(why)
	}
	return bound{n: int64(d)}
}

// Bounds works out, from the settings of p's layers (see [Layer]), the
// most calls to the op and the longest time one call through p can take.
// The caller's own deadline is not counted; the op is taken to honour its
// context (return as soon as it is done), and a fallback's function,
// observers and hooks (retry's OnRetry) to take no time and call nothing.
// A layer that declares no kind makes both bounds unknown.
//
// Working inward out, with C and D the calls and duration of the layers
// inside (the op alone: C = 1, D unbounded):
//
//   - timeout(d): C, min(d, D)
//   - retry (n attempts, waits up to W, MaxElapsed E): n × C,
//     min(E, (n-1) × (D + W)) + D; no bound on the calls if n is Off
//   - hedge (1 + h attempts, delay δ, hint waits up to W): (1 + h) × C,
//     h × (min(δ, D) + W) + D
//   - bulkhead, rate limiter (waits up to W): C, W + D
//   - breaker, fallback: C, D
//   - other (adds up to W): C, W + D
//
// A W of Off is no bound. The bounds hold for every call, also under
// faults: a retry waits no longer than MaxWait at a time and starts no
// attempt after MaxElapsed, however long a Retry-After hint the dependency
// sends. Bounds allocates; it is meant for tests and start-up checks.
func (p Policy[T]) Bounds() Bounds {
	calls := bound{n: 1}
	dur := unbounded("no timeout: an op that hangs holds the call")
	ls := p.Layers()
	for i := len(ls) - 1; i >= 0; i-- {
		l := ls[i]
		switch l.Kind {
		case KindTimeout:
			dur = least(bound{n: int64(l.Timeout)}, dur)
		case KindRetry:
			if l.Attempts == Off {
				// Validated retries need a MaxElapsed with Attempts Off.
				calls = unbounded(l.Name + ": Attempts Off, and a wait may be 0")
				if l.MaxElapsed == 0 {
					dur = unbounded(l.Name + ": Attempts Off and no MaxElapsed")
				} else {
					dur = add(bound{n: int64(l.MaxElapsed)}, dur)
				}
				continue
			}
			n := int64(l.Attempts)
			calls = mul(n, calls)
			w := wait(l.MaxWait, l.Name+": MaxWait Off and no MaxElapsed: a Retry-After hint may hold it any time")
			waits := mul(n-1, add(dur, w))
			if l.MaxElapsed > 0 {
				waits = least(bound{n: int64(l.MaxElapsed)}, waits)
			}
			dur = add(waits, dur)
		case KindHedge:
			calls = mul(int64(l.Attempts), calls)
			gap := add(least(wait(l.Delay, l.Name+": a delay with no upper bound"), dur), wait(l.MaxWait, l.Name+": MaxWait with no bound: a Retry-After hint may hold the next attempt any time"))
			dur = add(mul(int64(l.Attempts-1), gap), dur)
		case KindBulkhead, KindRateLimit, KindOther:
			dur = add(wait(l.MaxWait, l.Name+": its wait has no bound"), dur)
		case KindBreaker, KindFallback:
		default:
			why := l.Name + ": the layer declares no kind (see Policy.Describe)"
			calls, dur = unbounded(why), unbounded(why)
		}
	}
	var b Bounds
	if b.CallsUnbounded = calls.none; calls.none == "" {
		b.Calls = int(calls.n)
	}
	if b.DurationUnbounded = dur.none; dur.none == "" {
		b.Duration = time.Duration(dur.n)
	}
	return b
}
