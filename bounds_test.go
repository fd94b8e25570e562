package resilience_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/chaos"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

const ms = time.Millisecond

// Bounds on pipelines worked out by hand from the formula in its doc.
func TestBoundsHandComputed(t *testing.T) {
	to := func(d time.Duration) resilience.Policy[int] { return timeout.New[int](d) }
	for _, tc := range []struct {
		name string
		p    resilience.Policy[int]
		want resilience.Bounds
	}{
		{"quick start: 3 attempts of 200ms, the last starting by 2s",
			resilience.Then(fallbackP(), retry.New[int](retry.WithMaxElapsed(2*time.Second)), breakerP(), to(200*ms)),
			resilience.Bounds{Calls: 3, Duration: 2200 * ms}},
		{"5 attempts of 100ms, 4 waits of at most 1s",
			resilience.Then(retry.New[int](retry.WithAttempts(5), retry.WithMaxWait(time.Second)), to(100*ms)),
			resilience.Bounds{Calls: 5, Duration: 4*(100*ms+time.Second) + 100*ms}},
		{"MaxElapsed shorter than the attempts and waits",
			resilience.Then(
				retry.New[int](retry.WithMaxElapsed(time.Second)),
				hedge.New[int](50*ms, hedge.WithMaxHedges(2), hedge.WithBudget(0.1)), // 2 × (min(50ms, 120ms) + 50ms) + 120ms
				breakerP(),
				bulkhead.Policy[int](bulkhead.New(4, bulkhead.WithMaxQueue(10), bulkhead.WithMaxWait(20*ms))), // 20ms + 100ms
				to(100*ms)),
			resilience.Bounds{Calls: 9, Duration: time.Second + 320*ms}},
		{"a timeout outside the retry bounds it all",
			resilience.Then(to(time.Second), retry.New[int](), to(600*ms)),
			resilience.Bounds{Calls: 3, Duration: time.Second}},
		{"a hedge of a quantile delay with no upper bound waits at most the attempt",
			resilience.Then(hedge.New[int](10*ms, hedge.WithQuantile(0.9)), to(100*ms)),
			resilience.Bounds{Calls: 2, Duration: (100*ms + 10*ms) + 100*ms}},
		{"nested retries multiply",
			resilience.Then(retry.New[int](retry.WithMaxWait(ms)), retry.New[int](retry.WithAttempts(2), retry.WithMaxWait(ms)), to(10*ms)),
			// inner: 2 × 10ms + 1ms = 21ms; outer: 3 × 21ms + 2 × 1ms
			resilience.Bounds{Calls: 6, Duration: 65 * ms}},
		{"a rate limiter that refuses at once adds no time",
			resilience.Then(ratelimitP(), to(10*ms)),
			resilience.Bounds{Calls: 1, Duration: 10 * ms}},
		{"no timeout: the op may hang",
			resilience.Then(retry.New[int](), breakerP()),
			resilience.Bounds{Calls: 3, DurationUnbounded: "no timeout: an op that hangs holds the call"}},
		{"the identity",
			resilience.Policy[int]{},
			resilience.Bounds{Calls: 1, DurationUnbounded: "no timeout: an op that hangs holds the call"}},
		{"retry without a limit on its attempts",
			resilience.Then(retry.New[int](retry.WithAttempts(resilience.Off), retry.WithMaxElapsed(5*time.Second)), to(time.Second)),
			resilience.Bounds{CallsUnbounded: "retry: Attempts Off, and a wait may be 0", Duration: 6 * time.Second}},
		{"retry without a cap on its waits",
			resilience.Then(retry.New[int](retry.WithMaxWait(resilience.Off)), to(time.Second)),
			resilience.Bounds{Calls: 3, DurationUnbounded: "retry: MaxWait Off and no MaxElapsed: a Retry-After hint may hold it any time"}},
		{"a retry without a cap on its waits, bounded by MaxElapsed",
			resilience.Then(retry.New[int](retry.WithMaxWait(resilience.Off), retry.WithMaxElapsed(time.Second)), to(time.Second)),
			resilience.Bounds{Calls: 3, Duration: 2 * time.Second}},
		{"a hedge without a cap on hint waits",
			resilience.Then(hedge.New[int](10*ms, hedge.WithMaxWait(resilience.Off)), to(time.Second)),
			resilience.Bounds{Calls: 2, DurationUnbounded: "hedge(10ms): MaxWait with no bound: a Retry-After hint may hold the next attempt any time"}},
		{"a bulkhead queue with no MaxWait",
			resilience.Then(bulkhead.Policy[int](bulkhead.New(1, bulkhead.WithMaxQueue(1))), to(time.Second)),
			resilience.Bounds{Calls: 1, DurationUnbounded: "bulkhead: its wait has no bound"}},
		{"a rate limiter that waits with no MaxWait",
			resilience.Then(ratelimit.WaitPolicy[int](ratelimit.New(10, 1)), to(time.Second)),
			resilience.Bounds{Calls: 1, DurationUnbounded: "ratelimit: its wait has no bound"}},
		{"a rate limiter that waits up to MaxWait",
			resilience.Then(ratelimit.WaitPolicy[int](ratelimit.New(10, 1, ratelimit.WithMaxWait(50*ms))), to(time.Second)),
			resilience.Bounds{Calls: 1, Duration: time.Second + 50*ms}},
		{"chaos latency inside a timeout is cut by it",
			resilience.Then(to(time.Second), chaos.Latency[int](chaos.NewInjector(1), nil, func() time.Duration { return ms })),
			resilience.Bounds{Calls: 1, Duration: time.Second}},
		{"a layer that declares no kind",
			resilience.Then(retry.New[int](), resilience.New("mine", pass), to(time.Second)),
			resilience.Bounds{CallsUnbounded: "mine: the layer declares no kind (see Policy.Describe)",
				DurationUnbounded: "mine: the layer declares no kind (see Policy.Describe)"}},
	} {
		if diff := cmp.Diff(tc.want, tc.p.Bounds()); diff != "" {
			t.Errorf("%s: Bounds(%s) mismatch (-want +got):\n%s", tc.name, tc.p, diff)
		}
	}
}

// A chaos latency outside every timeout makes the duration unbounded.
func TestBoundsChaosLatencyOutsideTimeout(t *testing.T) {
	p := resilience.Then(chaos.Latency[int](chaos.NewInjector(1), nil, func() time.Duration { return ms }), timeoutP())
	if got := p.Bounds(); got.DurationUnbounded != "chaos.latency: its wait has no bound" {
		t.Errorf("Bounds(%s) = %+v, want the duration unbounded by chaos.latency", p, got)
	}
}

// Overflowing products and sums are no bound, not a wrapped number.
func TestBoundsOverflow(t *testing.T) {
	mine := resilience.New("huge", pass).Describe(resilience.Layer{Kind: resilience.KindRetry, Attempts: 1 << 40, MaxWait: time.Hour})
	p := resilience.Then(mine, mine, timeoutP())
	b := p.Bounds()
	if b.CallsUnbounded == "" || b.DurationUnbounded == "" {
		t.Errorf("Bounds(%s) = %+v, want both unbounded by overflow", p, b)
	}
}

func TestBoundsString(t *testing.T) {
	for _, tc := range []struct {
		b    resilience.Bounds
		want string
	}{
		{resilience.Bounds{Calls: 3, Duration: 2200 * ms}, "at most 3 calls in at most 2.2s"},
		{resilience.Bounds{Calls: 3, DurationUnbounded: "no timeout"}, "at most 3 calls, unbounded duration (no timeout)"},
		{resilience.Bounds{CallsUnbounded: "retry: Attempts Off", Duration: time.Second}, "unbounded calls (retry: Attempts Off) in at most 1s"},
	} {
		if got := tc.b.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.b, got, tc.want)
		}
	}
}
