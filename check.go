package resilience

import (
	"slices"
	"strings"
)

// Code names one kind of [Finding], stably: tests and acknowledgements
// refer to it.
type Code string

// The findings of [Policy.Check]: the orders the package documentation
// (see "Order") warns about. Each is reported once per pair of layers (the
// outer named first), or once per layer.
const (
	// A timeout outside a retry bounds all attempts together: a slow first
	// attempt uses up the time, and the retries never run or are cut off.
	TimeoutOutsideRetry Code = "timeout-outside-retry"
	// A breaker outside a retry sees one outcome per call however many
	// attempts failed, and its half-open trial is a whole retry sequence.
	BreakerOutsideRetry Code = "breaker-outside-retry"
	// A fallback inside a breaker turns failures into successes: the
	// breaker never sees the dependency fail.
	FallbackInsideBreaker Code = "fallback-inside-breaker"
	// A fallback inside a retry answers the first failure: nothing is
	// retried.
	FallbackInsideRetry Code = "fallback-inside-retry"
	// A bulkhead outside a retry holds its slot through every backoff wait.
	BulkheadOutsideRetry Code = "bulkhead-outside-retry"
	// A rate limiter outside a retry takes one token for a whole retry
	// sequence: retries bypass the limit.
	RateLimitOutsideRetry Code = "ratelimit-outside-retry"
	// A timeout outside a bulkhead or rate limiter counts the wait for a
	// slot or a token against the attempt.
	TimeoutOutsideLimiter Code = "timeout-outside-limiter"
	// A retry inside a retry multiplies their attempts (3 × 3 = 9 calls).
	RetryInsideRetry Code = "retry-inside-retry"
	// A hedge inside a breaker: the breaker counts a race as one call and
	// cannot refuse the hedged copies.
	HedgeInsideBreaker Code = "hedge-inside-breaker"
	// A hedge outside a retry: each copy runs a whole retry sequence.
	HedgeOutsideRetry Code = "hedge-outside-retry"
	// A timeout outside a hedge: the copies share the first attempt's
	// deadline, so a copy started late has little time.
	TimeoutOutsideHedge Code = "timeout-outside-hedge"
	// A hedge without a budget adds up to MaxHedges calls to every slow
	// call, even when the dependency is slow for everyone.
	HedgeWithoutBudget Code = "hedge-without-budget"
)

// Finding is one order [Policy.Check] warns about.
type Finding struct {
	Code Code
	// Outer and Inner are the names of the two layers, the outer first;
	// Inner is empty for a finding about one layer.
	Outer, Inner string
	// What the order does wrong, why it matters, and the fix.
	What, Why, Fix string
}

// String returns the finding on one line: its code, the layers, what, why
// and the fix.
func (f Finding) String() string {
	layers := f.Outer
	if f.Inner != "" {
		layers += " > " + f.Inner
	}
	return string(f.Code) + " (" + layers + "): " + f.What + ": " + f.Why + "; fix: " + f.Fix
}

// rule is one pair rule of Check: a layer of a kind in outer with a layer
// of a kind in inner anywhere inside it.
type rule struct {
	code           Code
	outer, inner   []Kind
	what, why, fix string
}

var (
	limiters = []Kind{KindBulkhead, KindRateLimit}
	rules    = []rule{
		{TimeoutOutsideRetry, []Kind{KindTimeout}, []Kind{KindRetry},
			"one deadline for all attempts",
			"a slow first attempt uses up the time, and the retries never run or are cut off mid-call",
			"put the timeout inside the retry, to bound each attempt; bound the whole call with the retry's MaxElapsed"},
		{BreakerOutsideRetry, []Kind{KindBreaker}, []Kind{KindRetry},
			"the breaker sees one outcome per retry sequence",
			"it trips several times later than it should, and its half-open trial is a whole retry sequence",
			"put the breaker inside the retry"},
		{FallbackInsideBreaker, []Kind{KindBreaker}, []Kind{KindFallback},
			"the fallback hides failures from the breaker",
			"the breaker never sees the dependency fail and never trips",
			"put the fallback outermost"},
		{FallbackInsideRetry, []Kind{KindRetry}, []Kind{KindFallback},
			"the fallback hides failures from the retry",
			"the fallback answers the first failure, so nothing is retried",
			"put the fallback outermost"},
		{BulkheadOutsideRetry, []Kind{KindBulkhead}, []Kind{KindRetry},
			"a slot is held across backoff waits",
			"a caller holds its slot through all its waits, starving callers that have work to do",
			"put the bulkhead inside the retry"},
		{RateLimitOutsideRetry, []Kind{KindRateLimit}, []Kind{KindRetry},
			"retries bypass the rate limit",
			"a whole retry sequence takes one token",
			"put the rate limiter inside the retry"},
		{TimeoutOutsideLimiter, []Kind{KindTimeout}, limiters,
			"the wait for a slot or a token counts against the deadline",
			"an attempt that queued long has little time left for the dependency",
			"put the timeout inside the bulkhead or rate limiter (or acknowledge the finding if the wait should count)"},
		{RetryInsideRetry, []Kind{KindRetry}, []Kind{KindRetry},
			"retries multiply",
			"each outer attempt runs a whole inner retry sequence: 3 × 3 attempts make 9 calls, a retry storm on a struggling dependency",
			"keep one retry per call path (mind a retry in an HTTP transport under a retry of the caller's)"},
		{HedgeInsideBreaker, []Kind{KindBreaker}, []Kind{KindHedge},
			"the breaker counts a race as one call",
			"it cannot refuse the hedged copies, so a struggling dependency gets the extra load",
			"put the hedge outside the breaker"},
		{HedgeOutsideRetry, []Kind{KindHedge}, []Kind{KindRetry},
			"each hedged copy runs a whole retry sequence",
			"up to (1 + MaxHedges) × Attempts calls for one",
			"put the hedge inside the retry"},
		{TimeoutOutsideHedge, []Kind{KindTimeout}, []Kind{KindHedge},
			"the hedged copies share one deadline",
			"a copy started late has little time",
			"put the timeout inside the hedge, to bound each copy"},
	}
)

// Check reports the orders of p's layers that the package documentation
// warns about (see "Order"), outermost pair first, as [Finding]s; nil when
// there are none. It reads the layers' kinds (see [Layer]) and skips
// layers that declare none. A finding whose Code is in ack, or
// acknowledged by one of its layers ([Policy.Acknowledge]), is left out:
// acknowledge an order you chose on purpose. Check is meant for tests and
// start-up checks; it allocates.
//
// It reports, for each pair of layers with the outer one first: a timeout
// outside a retry, a hedge or a bulkhead or rate limiter; a breaker, a
// bulkhead, a rate limiter or a hedge outside a retry; a fallback inside a
// breaker or a retry; a retry inside a retry; a hedge inside a breaker;
// and, for each hedge, a hedge without a budget. A retry hidden inside the
// op (an HTTP client whose transport retries) is not a layer, and Check
// cannot see it.
func (p Policy[T]) Check(ack ...Code) []Finding {
	ls := p.Layers()
	var fs []Finding
	for i, o := range ls {
		if o.Kind == KindHedge && !o.Budget && !slices.Contains(ack, HedgeWithoutBudget) && !slices.Contains(o.Acknowledged, HedgeWithoutBudget) {
			fs = append(fs, Finding{Code: HedgeWithoutBudget, Outer: o.Name,
				What: "a hedge with no budget",
				Why:  "when the dependency is slow for everyone, every call adds up to MaxHedges calls to its load",
				Fix:  "give the hedge a budget (hedge.WithBudget)"})
		}
		for _, in := range ls[i+1:] {
			for _, r := range rules {
				if r.code == TimeoutOutsideLimiter && in.MaxWait == 0 {
					continue // a limiter that never waits (no queue; Policy, not WaitPolicy) costs the deadline nothing
				}
				if slices.Contains(r.outer, o.Kind) && slices.Contains(r.inner, in.Kind) && !slices.Contains(ack, r.code) &&
					!slices.Contains(o.Acknowledged, r.code) && !slices.Contains(in.Acknowledged, r.code) {
					fs = append(fs, Finding{Code: r.code, Outer: o.Name, Inner: in.Name, What: r.what, Why: r.why, Fix: r.fix})
				}
			}
		}
	}
	return fs
}

// Checked returns p if [Policy.Check] finds nothing in it but the codes in
// ack, and panics otherwise with a message that lists the findings, one a
// line. Use it where a pipeline is composed, to fail at start-up on an
// order nobody chose:
//
//	policy := resilience.Checked(resilience.Then(retryP, breakerP, timeoutP))
func Checked[T any](p Policy[T], ack ...Code) Policy[T] {
	fs := p.Check(ack...)
	if len(fs) == 0 {
		return p
	}
	var b strings.Builder
	b.WriteString("resilience: Checked(" + p.String() + "):")
	for _, f := range fs {
		b.WriteString("\n\t" + f.String())
	}
	panic(b.String())
}
