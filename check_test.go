package resilience_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/chaos"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/throttle"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// layers of each kind, built by the real policies, for the order tests.
func fallbackP() resilience.Policy[int] {
	return resilience.Fallback(func(context.Context, error) (int, error) { return 0, nil })
}
func retryP() resilience.Policy[int]   { return retry.New[int]() }
func breakerP() resilience.Policy[int] { return breaker.Policy[int](breaker.New()) }
func hedgeP() resilience.Policy[int] {
	return hedge.New[int](10*time.Millisecond, hedge.WithBudget(0.1))
}

func bulkheadP() resilience.Policy[int]  { return bulkhead.Policy[int](bulkhead.New(4)) }
func ratelimitP() resilience.Policy[int] { return ratelimit.Policy[int](ratelimit.New(10, 10)) }

// Limiters that wait (a queue, WaitPolicy), so that a timeout outside them
// counts their waits.
func queuedBulkheadP() resilience.Policy[int] {
	return bulkhead.Policy[int](bulkhead.New(4, bulkhead.WithMaxQueue(8), bulkhead.WithMaxWait(time.Second)))
}
func waitingRatelimitP() resilience.Policy[int] {
	return ratelimit.WaitPolicy[int](ratelimit.New(10, 10, ratelimit.WithMaxWait(time.Second)))
}
func timeoutP() resilience.Policy[int] { return timeout.New[int](time.Second) }

// codes returns the codes of fs, in order.
func codes(fs []resilience.Finding) []resilience.Code {
	var cs []resilience.Code
	for _, f := range fs {
		cs = append(cs, f.Code)
	}
	return cs
}

// The README's recommended order draws no finding.
func TestCheckRecommendedOrderIsQuiet(t *testing.T) {
	p := resilience.Then(fallbackP(), retryP(), hedgeP(), breakerP(), bulkheadP(), ratelimitP(), timeoutP())
	if fs := p.Check(); len(fs) != 0 {
		t.Errorf("Check(%s) = %v, want no finding", p, fs)
	}
	// The quick start's pipeline, and one with an adaptive limiter.
	lim := adaptive.New()
	q := resilience.Then(fallbackP(), retryP(), breakerP(), adaptive.Policy[int](lim), timeoutP())
	if fs := q.Check(); len(fs) != 0 {
		t.Errorf("Check(%s) = %v, want no finding", q, fs)
	}
	if fs := (resilience.Policy[int]{}).Check(); fs != nil {
		t.Errorf("Check of the zero Policy = %v, want nil", fs)
	}
}

// Each wrong order of the README's table is reported, with its code and
// the two layers.
func TestCheckReportsEachWrongOrder(t *testing.T) {
	for _, tc := range []struct {
		code         resilience.Code
		outer, inner resilience.Policy[int]
	}{
		{resilience.TimeoutOutsideRetry, timeoutP(), retryP()},
		{resilience.BreakerOutsideRetry, breakerP(), retryP()},
		{resilience.FallbackInsideBreaker, breakerP(), fallbackP()},
		{resilience.FallbackInsideRetry, retryP(), fallbackP()},
		{resilience.BulkheadOutsideRetry, bulkheadP(), retryP()},
		{resilience.BulkheadOutsideRetry, adaptive.Policy[int](adaptive.New()), retryP()},
		{resilience.RateLimitOutsideRetry, ratelimitP(), retryP()},
		{resilience.RateLimitOutsideRetry, ratelimit.WaitPolicy[int](ratelimit.New(10, 10)), retryP()},
		{resilience.TimeoutOutsideLimiter, timeoutP(), queuedBulkheadP()},
		{resilience.TimeoutOutsideLimiter, timeoutP(), waitingRatelimitP()},
		{resilience.RetryInsideRetry, retryP(), retryP()},
		{resilience.HedgeInsideBreaker, breakerP(), hedgeP()},
		{resilience.HedgeOutsideRetry, hedgeP(), retryP()},
		{resilience.TimeoutOutsideHedge, timeoutP(), hedgeP()},
	} {
		p := tc.outer.Then(tc.inner)
		fs := p.Check()
		if diff := cmp.Diff([]resilience.Code{tc.code}, codes(fs)); diff != "" {
			t.Errorf("Check(%s) codes mismatch (-want +got):\n%s", p, diff)
			continue
		}
		f := fs[0]
		if f.Outer != tc.outer.String() || f.Inner != tc.inner.String() {
			t.Errorf("Check(%s) layers = %q > %q, want %q > %q", p, f.Outer, f.Inner, tc.outer, tc.inner)
		}
		if f.What == "" || f.Why == "" || f.Fix == "" {
			t.Errorf("Check(%s) = %+v, want a what, a why and a fix", p, f)
		}
		// The pair is found with other layers between and around them.
		wide := resilience.Then(tc.outer, resilience.New("between", pass), tc.inner, resilience.New("inside", pass))
		if diff := cmp.Diff([]resilience.Code{tc.code}, codes(wide.Check())); diff != "" {
			t.Errorf("Check(%s) codes mismatch (-want +got):\n%s", wide, diff)
		}
		// In the right order, the pair draws nothing (but retry in retry).
		if tc.code != resilience.RetryInsideRetry {
			if fs := tc.inner.Then(tc.outer).Check(); len(fs) != 0 {
				t.Errorf("Check(%s) = %v, want no finding", tc.inner.Then(tc.outer), fs)
			}
		}
	}
}

func pass(ctx context.Context, next resilience.Next[int]) (int, error) { return next.Call(ctx) }

// A hedge without a budget is reported alone; with one, not.
func TestCheckHedgeWithoutBudget(t *testing.T) {
	p := resilience.Then(retryP(), hedge.New[int](10*time.Millisecond), breakerP())
	fs := p.Check()
	want := []resilience.Finding{{Code: resilience.HedgeWithoutBudget, Outer: "hedge(10ms)"}}
	if diff := cmp.Diff(want, fs, cmp.FilterPath(func(p cmp.Path) bool {
		n := p.Last().String()
		return n == ".What" || n == ".Why" || n == ".Fix"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("Check(%s) mismatch (-want +got):\n%s", p, diff)
	}
	if !strings.HasPrefix(fs[0].String(), "hedge-without-budget (hedge(10ms)): ") {
		t.Errorf("Finding.String() = %q, want it to start with its code and layer", fs[0])
	}
}

// An acknowledged code is left out, and only that code.
func TestCheckAcknowledged(t *testing.T) {
	// An overall deadline around the retry, on purpose, and a timeout
	// around the bulkhead so that the queue wait counts.
	p := resilience.Then(timeoutP(), retryP(), breakerP(), timeoutP(), queuedBulkheadP())
	got := codes(p.Check())
	want := []resilience.Code{resilience.TimeoutOutsideRetry, resilience.TimeoutOutsideLimiter, resilience.TimeoutOutsideLimiter}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Check(%s) mismatch (-want +got):\n%s", p, diff)
	}
	if fs := p.Check(resilience.TimeoutOutsideRetry, resilience.TimeoutOutsideLimiter); len(fs) != 0 {
		t.Errorf("Check with both acknowledged = %v, want none", fs)
	}
	got = codes(p.Check(resilience.TimeoutOutsideLimiter))
	if diff := cmp.Diff([]resilience.Code{resilience.TimeoutOutsideRetry}, got); diff != "" {
		t.Errorf("Check acknowledging %s mismatch (-want +got):\n%s", resilience.TimeoutOutsideLimiter, diff)
	}
}

// Checked returns a clean policy as it is, panics on a finding naming its
// code, and is quiet on acknowledged ones.
func TestChecked(t *testing.T) {
	good := resilience.Then(retryP(), breakerP(), timeoutP())
	if got := resilience.Checked(good); got.String() != good.String() {
		t.Errorf("Checked(%s) = %s, want it unchanged", good, got)
	}
	bad := resilience.Then(breakerP(), retryP(), timeoutP())
	msg := panicOf(func() { resilience.Checked(bad) })
	if !strings.HasPrefix(msg, "resilience: Checked(breaker > retry > timeout(1s)):") || !strings.Contains(msg, "\n\tbreaker-outside-retry (breaker > retry): ") {
		t.Errorf("Checked(%s) panicked with %q, want the pipeline and the finding", bad, msg)
	}
	if msg := panicOf(func() { resilience.Checked(bad, resilience.BreakerOutsideRetry) }); msg != "" {
		t.Errorf("Checked with the finding acknowledged panicked: %s", msg)
	}
}

// A layer of New has no kind until Describe gives it one; Check skips it.
func TestDescribe(t *testing.T) {
	mine := resilience.New("my-retry", pass)
	p := resilience.Then(timeoutP(), mine)
	if fs := p.Check(); len(fs) != 0 {
		t.Errorf("Check(%s) with an undescribed layer = %v, want none", p, fs)
	}
	described := mine.Describe(resilience.Layer{Name: "ignored", Kind: resilience.KindRetry, Attempts: 2})
	if got := codes(resilience.Then(timeoutP(), described).Check()); !cmp.Equal(got, []resilience.Code{resilience.TimeoutOutsideRetry}) {
		t.Errorf("Check with the layer described as a retry = %v, want [%s]", got, resilience.TimeoutOutsideRetry)
	}
	want := []resilience.Layer{{Name: "timeout(1s)", Kind: resilience.KindTimeout, Timeout: time.Second}, {Name: "my-retry", Kind: resilience.KindRetry, Attempts: 2}}
	if diff := cmp.Diff(want, resilience.Then(timeoutP(), described).Layers()); diff != "" {
		t.Errorf("Layers mismatch (-want +got):\n%s", diff)
	}
	// The undescribed original is unchanged: policies are values.
	if diff := cmp.Diff([]resilience.Layer{{Name: "my-retry"}}, mine.Layers()); diff != "" {
		t.Errorf("Describe changed its receiver (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		p    resilience.Policy[int]
		d    resilience.Layer
		want string
	}{
		{resilience.Then(mine, mine), resilience.Layer{Kind: resilience.KindOther}, `resilience: Describe needs a policy of one layer (made by New), got "my-retry > my-retry"`},
		{resilience.Policy[int]{}, resilience.Layer{Kind: resilience.KindOther}, `resilience: Describe needs a policy of one layer (made by New), got "identity"`},
		{mine, resilience.Layer{}, "resilience: Describe(my-retry): Kind must not be empty"},
		{mine, resilience.Layer{Kind: resilience.KindRetry}, "resilience: Describe(my-retry): Attempts must be >= 1 or Off for a retry, got 0"},
		{mine, resilience.Layer{Kind: resilience.KindHedge, Attempts: resilience.Off}, "resilience: Describe(my-retry): Attempts must be >= 1 for a hedge, got -1"},
		{mine, resilience.Layer{Kind: resilience.KindTimeout}, "resilience: Describe(my-retry): Timeout must be > 0 for a timeout, got 0s"},
		{mine, resilience.Layer{Kind: resilience.KindOther, MaxWait: -2}, "resilience: Describe(my-retry): MaxWait must be >= 0 or Off, got -2ns"},
	} {
		if got := panicOf(func() { tc.p.Describe(tc.d) }); got != tc.want {
			t.Errorf("%s.Describe(%+v) panicked with %q, want %q", tc.p, tc.d, got, tc.want)
		}
	}
}

// A described layer runs as it did, at no allocation of its own.
func TestDescribedLayerRunsAsBefore(t *testing.T) {
	p := resilience.Then(resilience.New("plus1", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		v, err := next.Call(ctx)
		return v + 1, err
	}).Describe(resilience.Layer{Kind: resilience.KindOther}), timeoutP().Then())
	op := func(context.Context) (int, error) { return 41, nil }
	if v, err := p.Do(context.Background(), op); v != 42 || err != nil {
		t.Errorf("Do = %d, %v; want 42, nil", v, err)
	}
	q := resilience.New("plus1", pass).Describe(resilience.Layer{Kind: resilience.KindOther}).Then(breakerP())
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _, _ = q.Do(ctx, op) }); n != 0 {
		t.Errorf("Do through described layers allocates %v times, want 0", n)
	}
}

// panicOf returns the message f panics with, or "".
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = r.(string)
		}
	}()
	f()
	return ""
}

// Every built-in layer describes its kind.
func TestBuiltinLayersDescribeThemselves(t *testing.T) {
	in := chaos.NewInjector(0)
	p := resilience.Then(
		fallbackP(), retryP(), hedgeP(),
		breakerP(), breaker.KeyedPolicy[int](breaker.NewKeyed[string](), func(context.Context) string { return "k" }),
		bulkheadP(), adaptive.Policy[int](adaptive.New()),
		ratelimitP(), ratelimit.WaitPolicy[int](ratelimit.New(1, 1)),
		throttle.Policy[int](throttle.New()),
		chaos.Fault[int](in, func(context.Context) error { return nil }),
		chaos.Latency[int](in, nil, func() time.Duration { return 0 }),
		chaos.Result[int](in, func(context.Context) (int, error) { return 0, nil }),
		timeoutP(),
	)
	var got []resilience.Kind
	for _, l := range p.Layers() {
		got = append(got, l.Kind)
	}
	want := []resilience.Kind{resilience.KindFallback, resilience.KindRetry, resilience.KindHedge,
		resilience.KindBreaker, resilience.KindBreaker, resilience.KindBulkhead, resilience.KindBulkhead,
		resilience.KindRateLimit, resilience.KindRateLimit, resilience.KindOther,
		resilience.KindOther, resilience.KindOther, resilience.KindOther, resilience.KindTimeout}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kinds of %s mismatch (-want +got):\n%s", p, diff)
	}
}

// docs/pipelines.md lists every code in its table.
func TestDocsPipelinesListsEveryCode(t *testing.T) {
	doc, err := os.ReadFile("docs/pipelines.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []resilience.Code{
		resilience.TimeoutOutsideRetry, resilience.BreakerOutsideRetry, resilience.FallbackInsideBreaker,
		resilience.FallbackInsideRetry, resilience.BulkheadOutsideRetry, resilience.RateLimitOutsideRetry,
		resilience.TimeoutOutsideLimiter, resilience.RetryInsideRetry, resilience.HedgeInsideBreaker,
		resilience.HedgeOutsideRetry, resilience.TimeoutOutsideHedge, resilience.HedgeWithoutBudget,
	} {
		if !strings.Contains(string(doc), "\n| `"+string(c)+"` | ") {
			t.Errorf("docs/pipelines.md has no row for %s", c)
		}
	}
}

// A layer's acknowledgement quiets the findings of its code that name that
// layer, wherever it is composed, and no others.
func TestCheckLayerAcknowledged(t *testing.T) {
	deadline := timeout.New[int](5 * time.Second).Acknowledge(resilience.TimeoutOutsideRetry)
	p := resilience.Then(deadline, retryP(), breakerP(), timeoutP())
	if fs := p.Check(); len(fs) != 0 {
		t.Errorf("Check(%s) = %v, want none: the deadline's order is acknowledged", p, fs)
	}
	// The same order with a timeout that did not acknowledge it.
	q := resilience.Then(deadline, timeoutP(), retryP())
	got := codes(q.Check())
	if diff := cmp.Diff([]resilience.Code{resilience.TimeoutOutsideRetry}, got); diff != "" {
		t.Errorf("Check(%s) mismatch (-want +got):\n%s", q, diff)
	}
	if fs := q.Check(); len(fs) == 1 && fs[0].Outer != "timeout(1s)" {
		t.Errorf("Check(%s) reported %s, want the finding of timeout(1s)", q, fs[0])
	}
	// Acknowledged on the inner layer of the pair, on a whole policy.
	r := resilience.Then(breakerP(), resilience.Then(hedge.New[int](time.Millisecond), breakerP()).Acknowledge(resilience.HedgeInsideBreaker, resilience.HedgeWithoutBudget))
	if fs := r.Check(); len(fs) != 0 {
		t.Errorf("Check(%s) = %v, want none", r, fs)
	}
	// The unacknowledged original still reports, and Layers shows the codes.
	plain := timeout.New[int](5 * time.Second)
	if got := codes(resilience.Then(plain, retryP()).Check()); len(got) != 1 {
		t.Errorf("Acknowledge changed its receiver: Check = %v", got)
	}
	if got := deadline.Layers()[0].Acknowledged; !cmp.Equal(got, []resilience.Code{resilience.TimeoutOutsideRetry}) {
		t.Errorf("Layers()[0].Acknowledged = %v, want [%s]", got, resilience.TimeoutOutsideRetry)
	}
	if got := (resilience.Policy[int]{}).Acknowledge(resilience.RetryInsideRetry); got.String() != "identity" {
		t.Errorf("Acknowledge of the zero Policy = %s, want identity", got)
	}
}

// A limiter that never waits (a bulkhead without a queue, a rate limiter
// that refuses) costs a timeout outside it nothing: no finding.
func TestCheckTimeoutOutsideLimiterThatNeverWaits(t *testing.T) {
	for _, inner := range []resilience.Policy[int]{
		bulkhead.Policy[int](bulkhead.New(4)),
		ratelimit.Policy[int](ratelimit.New(10, 10)),
	} {
		p := resilience.Then(timeoutP(), inner)
		if fs := p.Check(); len(fs) != 0 {
			t.Errorf("%s: Check() = %v, want nothing", p, fs)
		}
	}
}
