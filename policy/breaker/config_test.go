package breaker_test

import (
	"math"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

func TestValidate(t *testing.T) {
	exp := backoff.Exponential(time.Second, 2, time.Minute)
	for _, c := range []struct {
		cfg  breaker.Config
		want string
	}{
		{breaker.Config{Threshold: -3}, "breaker: Threshold must be in [0, 4294967295] or Off (-1), got -3"},
		{breaker.Config{Threshold: math.MinInt}, "breaker: Threshold must be in [0, 4294967295] or Off (-1), got -9223372036854775808"},
		{breaker.Config{Threshold: math.MaxUint32 + 1}, "breaker: Threshold must be in [0, 4294967295] or Off (-1), got 4294967296"},
		{breaker.Config{FailureRatio: -0.1}, "breaker: FailureRatio must be in [0, 1], got -0.1"},
		{breaker.Config{FailureRatio: 1.5}, "breaker: FailureRatio must be in [0, 1], got 1.5"},
		{breaker.Config{FailureRatio: math.NaN()}, "breaker: FailureRatio must be in [0, 1], got NaN"},
		{breaker.Config{SlowCallRatio: 2, SlowCall: time.Second}, "breaker: SlowCallRatio must be in [0, 1], got 2"},
		{breaker.Config{SlowCall: -time.Second}, "breaker: SlowCall must be >= 0, got -1s"},
		{breaker.Config{SlowCall: resilience.Off}, "breaker: SlowCall must be >= 0 (Off applies only to Threshold), got off"},
		{breaker.Config{SlowCallRatio: 0.5}, "breaker: SlowCall must be > 0 when SlowCallRatio is set, got 0s"},
		{breaker.Config{WindowCalls: -1}, "breaker: WindowCalls must be >= 0 (Off applies only to Threshold), got -1"},
		{breaker.Config{WindowCalls: -2}, "breaker: WindowCalls must be >= 0, got -2"},
		{breaker.Config{WindowDuration: -time.Second}, "breaker: WindowDuration must be >= 0, got -1s"},
		{breaker.Config{WindowCalls: 10, WindowDuration: time.Minute}, "breaker: WindowCalls and WindowDuration are exclusive, got 10 and 1m0s"},
		{breaker.Config{WindowDuration: time.Minute, WindowBuckets: 1001}, "breaker: WindowBuckets must be in [0, 1000], got 1001"},
		{breaker.Config{WindowDuration: time.Minute, WindowBuckets: -1}, "breaker: WindowBuckets must be in [0, 1000], got -1"},
		{breaker.Config{FailureRatio: resilience.Off}, "breaker: FailureRatio must be in [0, 1], got -1"},
		{breaker.Config{WindowBuckets: 5}, "breaker: WindowBuckets needs WindowDuration, got 5 buckets and 0s"},
		{breaker.Config{WindowDuration: 3, WindowBuckets: 5}, "breaker: WindowDuration must be at least 1ns per bucket (WindowBuckets 5), got 3ns"},
		{breaker.Config{WindowDuration: 5}, "breaker: WindowDuration must be at least 1ns per bucket (WindowBuckets 0: the default 10), got 5ns"},
		{breaker.Config{MinCalls: -2}, "breaker: MinCalls must be >= 0, got -2"},
		{breaker.Config{MinCalls: resilience.Off}, "breaker: MinCalls must be >= 0 (Off applies only to Threshold), got -1"},
		{breaker.Config{WindowCalls: 10, MinCalls: 11}, "breaker: MinCalls must be <= WindowCalls (10), got 11"},
		{breaker.Config{Cooldown: -time.Second}, "breaker: Cooldown must be >= 0, got -1s"},
		{breaker.Config{Cooldown: resilience.Off}, "breaker: Cooldown must be >= 0 (Off applies only to Threshold), got off"},
		{breaker.Config{Cooldown: time.Second, CooldownBackoff: exp}, "breaker: Cooldown and CooldownBackoff are exclusive, got 1s and exponential(1s×2, max 1m0s)"},
		{breaker.Config{CooldownBackoff: backoff.Linear(0, 0, 0)}, "breaker: CooldownBackoff must have a Max > 0, got linear(0s+0s, max 0s)"},
		{breaker.Config{CooldownBackoff: backoff.Constant(0)}, "breaker: CooldownBackoff must have a Max > 0, got constant(0s)"},
		{breaker.Config{TrialTimeout: -time.Second}, "breaker: TrialTimeout must be >= 0, got -1s"},
		{breaker.Config{TrialTimeout: resilience.Off}, "breaker: TrialTimeout must be >= 0 (Off applies only to Threshold), got off"},
		{breaker.Config{WindowDuration: resilience.Off}, "breaker: WindowDuration must be >= 0 (Off applies only to Threshold), got off"},
		{breaker.Config{MaxTrials: -1}, "breaker: MaxTrials must be >= 0 (Off applies only to Threshold), got -1"},
		{breaker.Config{MaxTrials: -5}, "breaker: MaxTrials must be >= 0, got -5"},
		{breaker.Config{SuccessThreshold: -1}, "breaker: SuccessThreshold must be >= 0 (Off applies only to Threshold), got -1"},
		{breaker.Config{MaxKeys: -2}, "breaker: MaxKeys must be >= 0, got -2"},
	} {
		err := c.cfg.Validate()
		if err == nil || err.Error() != c.want {
			t.Errorf("Validate(%+v) = %v, want %q", c.cfg, err, c.want)
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != c.want {
					t.Errorf("New(WithConfig(%+v)) panicked with %v, want %q", c.cfg, r, c.want)
				}
			}()
			breaker.New(breaker.WithConfig(c.cfg))
		}()
	}
}

func TestValidConfigs(t *testing.T) {
	for _, c := range []breaker.Config{
		{},
		{Threshold: math.MaxUint32, FailureRatio: 1, SlowCallRatio: 1, SlowCall: 1, WindowCalls: 1, MinCalls: 1},
		{FailureRatio: 0.5, WindowDuration: 10, WindowBuckets: 10, MinCalls: 1000},
		{WindowDuration: time.Minute, WindowBuckets: 1000},
		{CooldownBackoff: backoff.Constant(time.Second), MaxTrials: 100, SuccessThreshold: 1000},
		{MinCalls: 5}, // no ratio rule: no effect, but valid
		{Threshold: resilience.Off},
		{Threshold: resilience.Off, FailureRatio: 0.5},
	} {
		if err := c.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", c, err)
		}
		breaker.New(breaker.WithConfig(c))
	}
}

func TestOptionsApplyInOrder(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(7), breaker.WithConfig(breaker.Config{Threshold: 2, Name: "a"}), breaker.WithName("b"))
	if b.Name() != "b" {
		t.Fatalf("Name() = %q, want the last option's", b.Name())
	}
	fail(t, b, f, 2) // WithConfig's non-zero Threshold replaced 7
	wantState(t, b, breaker.Open)
}

func TestWithConfigSetsOnlyNonZeroFields(t *testing.T) {
	// The options before WithConfig set fields the Config leaves zero
	// (Clock, Cooldown, MinCalls): they survive. The Config's non-zero
	// fields (Name, Threshold) replace the earlier options'. An option
	// after WithConfig overrides it (WindowCalls).
	f := clock.NewFake()
	b := breaker.New(breaker.WithClock(f), breaker.WithCooldown(time.Second), breaker.WithName("before"),
		breaker.WithThreshold(9), breaker.WithMinCalls(4),
		breaker.WithConfig(breaker.Config{Name: "cfg", Threshold: 2, FailureRatio: 1, WindowCalls: 50}),
		breaker.WithWindowCalls(4))
	if b.Name() != "cfg" {
		t.Fatalf("Name() = %q, want the Config's", b.Name())
	}
	fail(t, b, f, 2) // Threshold 2, not 9
	wantState(t, b, breaker.Open)
	wantRefused(t, b, breaker.ErrOpen, time.Second) // the earlier Cooldown, on the earlier clock
	f.Advance(time.Second)
	succeed(t, b, f, 1)
	wantState(t, b, breaker.Closed)

	// A ratio rule from the Config, over a window of 4 calls (the later
	// option, not the Config's 50) once it holds 4 calls (the earlier
	// MinCalls, not the default 10): S S S F S F holds S F S F, a ratio of
	// 0.5, at its last failure.
	f = clock.NewFake()
	b = breaker.New(breaker.WithClock(f), breaker.WithMinCalls(4),
		breaker.WithConfig(breaker.Config{FailureRatio: 0.5, WindowCalls: 50}), breaker.WithWindowCalls(4))
	succeed(t, b, f, 3)
	fail(t, b, f, 1)
	succeed(t, b, f, 1)
	wantState(t, b, breaker.Closed)
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
}

func TestWithConfigOfZeroConfigChangesNothing(t *testing.T) {
	b, f := newFake(breaker.WithThreshold(2), breaker.WithCooldown(time.Second), breaker.WithConfig(breaker.Config{}))
	fail(t, b, f, 2)
	wantRefused(t, b, breaker.ErrOpen, time.Second)
}

func TestThresholdOff(t *testing.T) {
	t.Run("alone: never trips by itself", func(t *testing.T) {
		b, f := newFake(breaker.WithThreshold(resilience.Off))
		fail(t, b, f, 1000)
		wantState(t, b, breaker.Closed)
		wantCounts(t, b, breaker.Counts{Calls: 1000, Failures: 1000, FailureRatio: 1, ConsecutiveFailures: 1000})
		b.ForceOpen() // manual control still works
		wantState(t, b, breaker.Open)
	})
	t.Run("in a Config", func(t *testing.T) {
		b, f := newFake(breaker.WithThreshold(3), breaker.WithConfig(breaker.Config{Threshold: resilience.Off}))
		fail(t, b, f, 10)
		wantState(t, b, breaker.Closed)
	})
	t.Run("with a ratio rule: only the ratio trips", func(t *testing.T) {
		b, f := newFake(breaker.WithThreshold(resilience.Off), breaker.WithFailureRatio(1), breaker.WithWindowCalls(20), breaker.WithMinCalls(20))
		fail(t, b, f, 19)
		wantState(t, b, breaker.Closed)
		fail(t, b, f, 1)
		wantState(t, b, breaker.Open)
	})
}

// An option states its value: one given 0, where 0 would silently mean
// the default or "no such rule", panics when it is made, naming the
// option and the value.
func TestOptionsPanicOnZero(t *testing.T) {
	wantOptionPanics(t, []optionPanic{
		{func() breaker.Option { return breaker.WithThreshold(0) }, "breaker: WithThreshold(0): the threshold must be in [1, 4294967295], or resilience.Off for no consecutive-failures rule; leave the option out for the default"},
		{func() breaker.Option { return breaker.WithFailureRatio(0) }, "breaker: WithFailureRatio(0): the ratio must be in (0, 1]; leave the option out for no failure-ratio rule"},
		{func() breaker.Option { return breaker.WithSlowCallRatio(0) }, "breaker: WithSlowCallRatio(0): the ratio must be in (0, 1]; leave the option out for no slow-call-ratio rule"},
		{func() breaker.Option { return breaker.WithSlowCall(0) }, "breaker: WithSlowCall(0s): the duration must be > 0; leave the option out for no slow calls"},
		{func() breaker.Option { return breaker.WithWindowCalls(0) }, "breaker: WithWindowCalls(0): the window must be >= 1 call; leave the option out for the default"},
		{func() breaker.Option { return breaker.WithWindowDuration(0) }, "breaker: WithWindowDuration(0s): the window must be > 0; leave the option out for no time-based window"},
		{func() breaker.Option { return breaker.WithWindowBuckets(0) }, "breaker: WithWindowBuckets(0): the buckets must be in [1, 1000]; leave the option out for the default, 10"},
		{func() breaker.Option { return breaker.WithMinCalls(0) }, "breaker: WithMinCalls(0): the minimum must be >= 1 call; leave the option out for the default"},
		{func() breaker.Option { return breaker.WithCooldown(0) }, "breaker: WithCooldown(0s): the cooldown must be > 0; leave the option out for the default, 30s"},
		{func() breaker.Option { return breaker.WithCooldownBackoff(backoff.Schedule{}) }, "breaker: WithCooldownBackoff(backoff.Schedule{}): the zero Schedule is not set; leave the option out for the fixed Cooldown"},
		{func() breaker.Option { return breaker.WithTrialTimeout(0) }, "breaker: WithTrialTimeout(0s): the timeout must be > 0; leave the option out for the default, the longest cooldown"},
		{func() breaker.Option { return breaker.WithMaxTrials(0) }, "breaker: WithMaxTrials(0): the trials must be >= 1; leave the option out for the default, 1"},
		{func() breaker.Option { return breaker.WithSuccessThreshold(0) }, "breaker: WithSuccessThreshold(0): the threshold must be >= 1; leave the option out for the default, 1"},
		{func() breaker.Option { return breaker.WithMaxKeys(0) }, "breaker: WithMaxKeys(0): the keys must be >= 1; leave the option out for the default, 8192"},
	})
}

func TestThresholdZeroIsTheDefault(t *testing.T) {
	// 0 means 5 when no other trip rule is set ...
	for _, opts := range [][]breaker.Option{
		nil,
		{breaker.WithConfig(breaker.Config{Threshold: 0})},
		{breaker.WithSlowCall(time.Second)}, // SlowCall alone is no rule
	} {
		b, f := newFake(opts...)
		fail(t, b, f, 4)
		wantState(t, b, breaker.Closed)
		fail(t, b, f, 1)
		wantState(t, b, breaker.Open)
	}
	// ... and no consecutive rule when another rule is set.
	for _, opts := range [][]breaker.Option{
		{breaker.WithFailureRatio(1), breaker.WithMinCalls(50)},
		{breaker.WithSlowCall(time.Second), breaker.WithSlowCallRatio(1)},
		{breaker.WithTripIf(func(c breaker.Counts) bool { return c.Failures >= 50 })},
	} {
		b, f := newFake(opts...)
		fail(t, b, f, 49)
		wantState(t, b, breaker.Closed)
	}
}

func TestNewNilOptionPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "breaker: New option must not be nil" {
			t.Fatalf("panic = %v", r)
		}
	}()
	breaker.New(nil)
}

func TestMinCallsDefaultsToTheWindowWhenSmaller(t *testing.T) {
	b, f := newFake(breaker.WithFailureRatio(1), breaker.WithWindowCalls(3))
	fail(t, b, f, 2)
	wantState(t, b, breaker.Closed)
	fail(t, b, f, 1)
	wantState(t, b, breaker.Open)
}

func TestTimeWindowDefaultsToTenBuckets(t *testing.T) {
	// A window of 10s in 1s buckets: a failure leaves it 10s after its
	// bucket began.
	b, f := newFake(breaker.WithThreshold(100), breaker.WithWindowDuration(10*time.Second))
	f.Advance(500 * time.Millisecond)
	fail(t, b, f, 1)
	f.Advance(9*time.Second + 499*time.Millisecond)
	wantCounts(t, b, breaker.Counts{Calls: 1, Failures: 1, FailureRatio: 1, ConsecutiveFailures: 1})
	f.Advance(time.Millisecond)
	wantCounts(t, b, breaker.Counts{ConsecutiveFailures: 1})
}

func TestZeroCooldownBackoffMeansTheFixedCooldown(t *testing.T) {
	// The zero Schedule is not set: no backoff, the fixed Cooldown. (An
	// explicit backoff.Constant(0), a cooldown of 0, is rejected: see
	// TestValidate.)
	for _, c := range []struct {
		opts []breaker.Option
		want time.Duration
	}{
		{[]breaker.Option{breaker.WithConfig(breaker.Config{CooldownBackoff: backoff.Schedule{}})}, 30 * time.Second},
		{[]breaker.Option{breaker.WithCooldown(5 * time.Second), breaker.WithConfig(breaker.Config{CooldownBackoff: backoff.Schedule{}})}, 5 * time.Second},
	} {
		b, f := newFake(append(c.opts, breaker.WithThreshold(1))...)
		for range 3 { // the trip, then failed trials: the cooldown does not grow
			fail(t, b, f, 1)
			wantRefused(t, b, breaker.ErrOpen, c.want)
			f.Advance(c.want)
		}
	}
	// A schedule that is not the zero one but never waits is refused.
	const want = "breaker: CooldownBackoff must have a Max > 0, got constant(0s, full jitter)"
	if err := (breaker.Config{CooldownBackoff: backoff.Constant(0).WithJitter(backoff.Full)}).Validate(); err == nil || err.Error() != want {
		t.Fatalf("Validate = %v, want %q", err, want)
	}
}

func TestExclusiveFieldsLaterSourceWins(t *testing.T) {
	// Setting one field of an exclusive pair to a non-zero value, by its
	// option or by a WithConfig whose Config sets it, clears the other:
	// the later source wins, as for any other field, and New does not
	// panic on a pair that no single source set.
	exp := backoff.Constant(3 * time.Second)
	for _, c := range []struct {
		name string
		opts []breaker.Option
		want time.Duration
	}{
		{"option then Config", []breaker.Option{breaker.WithCooldown(time.Second), breaker.WithConfig(breaker.Config{CooldownBackoff: exp})}, 3 * time.Second},
		{"Config then option", []breaker.Option{breaker.WithConfig(breaker.Config{CooldownBackoff: exp}), breaker.WithCooldown(time.Second)}, time.Second},
		{"backoff option then Config", []breaker.Option{breaker.WithCooldownBackoff(exp), breaker.WithConfig(breaker.Config{Cooldown: time.Second})}, time.Second},
		{"option then option", []breaker.Option{breaker.WithCooldown(time.Second), breaker.WithCooldownBackoff(exp)}, 3 * time.Second},
		{"Config then Config", []breaker.Option{breaker.WithConfig(breaker.Config{Cooldown: time.Second}), breaker.WithConfig(breaker.Config{CooldownBackoff: exp})}, 3 * time.Second},
		{"a zero clears nothing", []breaker.Option{breaker.WithCooldownBackoff(exp), breaker.WithConfig(breaker.Config{Cooldown: 0})}, 3 * time.Second},
	} {
		t.Run("cooldown: "+c.name, func(t *testing.T) {
			b, f := newFake(append(c.opts, breaker.WithThreshold(1))...)
			fail(t, b, f, 1)
			wantRefused(t, b, breaker.ErrOpen, c.want)
		})
	}

	// A count-based window of 2 calls holds 2 of 3 calls, a time-based
	// window of a minute all 3. Setting WindowCalls also clears
	// WindowBuckets, which only a time-based window takes.
	for _, c := range []struct {
		name string
		opts []breaker.Option
		want uint64
	}{
		{"option then Config", []breaker.Option{breaker.WithWindowCalls(2), breaker.WithConfig(breaker.Config{WindowDuration: time.Minute})}, 3},
		{"Config then option", []breaker.Option{breaker.WithConfig(breaker.Config{WindowDuration: time.Minute, WindowBuckets: 20}), breaker.WithWindowCalls(2)}, 2},
		{"options then Config", []breaker.Option{breaker.WithWindowDuration(time.Minute), breaker.WithWindowBuckets(20), breaker.WithConfig(breaker.Config{WindowCalls: 2})}, 2},
		{"option then option", []breaker.Option{breaker.WithWindowCalls(2), breaker.WithWindowDuration(time.Minute)}, 3},
		{"a zero clears nothing", []breaker.Option{breaker.WithWindowDuration(time.Minute), breaker.WithConfig(breaker.Config{WindowCalls: 0})}, 3},
	} {
		t.Run("window: "+c.name, func(t *testing.T) {
			b, f := newFake(c.opts...)
			succeed(t, b, f, 3)
			if got := b.Counts().Calls; got != c.want {
				t.Errorf("Counts().Calls = %d, want %d", got, c.want)
			}
		})
	}

	// One Config that sets both fields of a pair is still invalid.
	for _, c := range []struct {
		opts []breaker.Option
		want string
	}{
		{[]breaker.Option{breaker.WithCooldown(time.Second), breaker.WithConfig(breaker.Config{Cooldown: 2 * time.Second, CooldownBackoff: exp})},
			"breaker: Cooldown and CooldownBackoff are exclusive, got 2s and constant(3s)"},
		{[]breaker.Option{breaker.WithWindowDuration(time.Minute), breaker.WithConfig(breaker.Config{WindowCalls: 2, WindowBuckets: 5})},
			"breaker: WindowBuckets needs WindowDuration, got 5 buckets and 0s"},
	} {
		if r := recovered(func() { breaker.New(c.opts...) }); r != c.want {
			t.Errorf("New panicked with %v, want %q", r, c.want)
		}
	}
}
