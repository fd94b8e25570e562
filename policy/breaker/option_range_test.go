package breaker_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// An option rejects, when it is made, every value outside its own range,
// on either side, and its message states that range exactly: an option
// given 0 or a negative value, unlike a Config field, never means the
// default.
func TestOptionsPanicOutOfRange(t *testing.T) {
	const (
		threshold = "the threshold must be in [1, 4294967295], or resilience.Off for no consecutive-failures rule; leave the option out for the default"
		failure   = "the ratio must be in (0, 1]; leave the option out for no failure-ratio rule"
		slow      = "the ratio must be in (0, 1]; leave the option out for no slow-call-ratio rule"
		buckets   = "the buckets must be in [1, 1000]; leave the option out for the default, 10"
	)
	wantOptionPanics(t, []optionPanic{
		{func() breaker.Option { return breaker.WithThreshold(0) }, "breaker: WithThreshold(0): " + threshold},
		{func() breaker.Option { return breaker.WithThreshold(-3) }, "breaker: WithThreshold(-3): " + threshold},
		{func() breaker.Option { return breaker.WithThreshold(math.MaxUint32 + 1) }, "breaker: WithThreshold(4294967296): " + threshold},
		{func() breaker.Option { return breaker.WithFailureRatio(0) }, "breaker: WithFailureRatio(0): " + failure},
		{func() breaker.Option { return breaker.WithFailureRatio(-0.1) }, "breaker: WithFailureRatio(-0.1): " + failure},
		{func() breaker.Option { return breaker.WithFailureRatio(1.5) }, "breaker: WithFailureRatio(1.5): " + failure},
		{func() breaker.Option { return breaker.WithFailureRatio(math.NaN()) }, "breaker: WithFailureRatio(NaN): " + failure},
		{func() breaker.Option { return breaker.WithSlowCallRatio(-1) }, "breaker: WithSlowCallRatio(-1): " + slow},
		{func() breaker.Option { return breaker.WithSlowCallRatio(2) }, "breaker: WithSlowCallRatio(2): " + slow},
		{func() breaker.Option { return breaker.WithSlowCall(-time.Second) }, "breaker: WithSlowCall(-1s): the duration must be > 0; leave the option out for no slow calls"},
		{func() breaker.Option { return breaker.WithWindowCalls(-2) }, "breaker: WithWindowCalls(-2): the window must be >= 1 call; leave the option out for the default"},
		{func() breaker.Option { return breaker.WithWindowDuration(-time.Second) }, "breaker: WithWindowDuration(-1s): the window must be > 0; leave the option out for no time-based window"},
		{func() breaker.Option { return breaker.WithWindowBuckets(0) }, "breaker: WithWindowBuckets(0): " + buckets},
		{func() breaker.Option { return breaker.WithWindowBuckets(-1) }, "breaker: WithWindowBuckets(-1): " + buckets},
		{func() breaker.Option { return breaker.WithWindowBuckets(1001) }, "breaker: WithWindowBuckets(1001): " + buckets},
		{func() breaker.Option { return breaker.WithMinCalls(resilience.Off) }, "breaker: WithMinCalls(-1): the minimum must be >= 1 call; leave the option out for the default"},
		{func() breaker.Option { return breaker.WithCooldown(-time.Second) }, "breaker: WithCooldown(-1s): the cooldown must be > 0; leave the option out for the default, 30s"},
		{func() breaker.Option { return breaker.WithTrialTimeout(-time.Second) }, "breaker: WithTrialTimeout(-1s): the timeout must be > 0; leave the option out for the default, the longest cooldown"},
		{func() breaker.Option { return breaker.WithMaxTrials(-5) }, "breaker: WithMaxTrials(-5): the trials must be >= 1; leave the option out for the default, 1"},
		{func() breaker.Option { return breaker.WithSuccessThreshold(-1) }, "breaker: WithSuccessThreshold(-1): the threshold must be >= 1; leave the option out for the default, 1"},
		{func() breaker.Option { return breaker.WithMaxKeys(-2) }, "breaker: WithMaxKeys(-2): the keys must be >= 1; leave the option out for the default, 8192"},
	})
}

// optionPanic is an option made with a bad value and the panic it must
// give.
type optionPanic struct {
	opt  func() breaker.Option
	want string
}

// wantOptionPanics makes each option and checks its panic's message.
func wantOptionPanics(t *testing.T, cases []optionPanic) {
	t.Helper()
	for _, tc := range cases {
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			tc.opt()
			return "no panic"
		}()
		if got != tc.want {
			t.Errorf("panicked with %q, want %q", got, tc.want)
		}
	}
}

// The bounds of an option's range are accepted.
func TestOptionsAcceptTheirBounds(t *testing.T) {
	for _, opts := range [][]breaker.Option{
		{breaker.WithThreshold(1)},
		{breaker.WithThreshold(math.MaxUint32)},
		{breaker.WithThreshold(resilience.Off)},
		{breaker.WithFailureRatio(1)},
		{breaker.WithFailureRatio(math.SmallestNonzeroFloat64)},
		{breaker.WithSlowCall(time.Second), breaker.WithSlowCallRatio(1)},
		{breaker.WithWindowDuration(time.Hour), breaker.WithWindowBuckets(1)},
		{breaker.WithWindowDuration(time.Hour), breaker.WithWindowBuckets(1000)},
		{breaker.WithMinCalls(1)},
		{breaker.WithCooldown(time.Nanosecond)},
		{breaker.WithTrialTimeout(time.Nanosecond)},
		{breaker.WithMaxTrials(1)},
		{breaker.WithSuccessThreshold(1)},
	} {
		breaker.New(opts...)
	}
	breaker.NewKeyed[string](breaker.WithMaxKeys(1))
}
