package retry_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    retry.Config
		want string // "" = valid
	}{
		{"zero: the default", retry.Config{}, ""},
		{"one attempt", retry.Config{Attempts: 1}, ""},
		{"no limit, bounded in time", retry.Config{Attempts: resilience.Off, MaxElapsed: time.Second}, ""},
		{"negative attempts", retry.Config{Attempts: -3},
			"retry: Attempts must be >= 1, 0 (the default, 3) or Off (-1, no limit), got -3"},
		{"negative max elapsed", retry.Config{MaxElapsed: -time.Second},
			"retry: MaxElapsed must be >= 0 (0: no bound), got -1s"},
		{"max elapsed Off", retry.Config{MaxElapsed: resilience.Off},
			"retry: MaxElapsed must be >= 0 (0: no bound), got off"},
		{"unbounded", retry.Config{Attempts: resilience.Off},
			"retry: Attempts Off (no limit) needs a MaxElapsed > 0, got 0s"},
		{"max wait", retry.Config{MaxWait: time.Minute}, ""},
		{"max wait Off", retry.Config{MaxWait: resilience.Off}, ""},
		{"negative max wait", retry.Config{MaxWait: -time.Second},
			"retry: MaxWait must be > 0, 0 (the default) or Off (no cap), got -1s"},
		{"tight loop", retry.Config{Attempts: resilience.Off, MaxElapsed: time.Second, Backoff: backoff.Constant(0)},
			"retry: Attempts Off (no limit) needs a Backoff with Max > 0, got constant(0s)"},
	} {
		err := tc.c.Validate()
		if got := errString(err); got != tc.want {
			t.Errorf("%s: Validate() = %q, want %q", tc.name, got, tc.want)
		}
		got := panicString(func() { retry.New[int](retry.WithConfig(tc.c)) })
		if got != tc.want {
			t.Errorf("%s: New(WithConfig) panicked with %q, want %q", tc.name, got, tc.want)
		}
	}
}

// An option states its value: one given 0, where 0 would silently mean
// the default (WithAttempts(0) was 3 attempts), or a value out of range,
// panics when it is made, naming the option and the value.
func TestOptionsPanicOnZeroAndInvalidValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  func() retry.Option
		want string
	}{
		{"WithAttempts(0)", func() retry.Option { return retry.WithAttempts(0) },
			"retry: WithAttempts(0): attempts must be >= 1 (1 = no retry), or resilience.Off for no limit; leave the option out for the default, 3"},
		{"WithAttempts(-2)", func() retry.Option { return retry.WithAttempts(-2) },
			"retry: WithAttempts(-2): attempts must be >= 1 (1 = no retry), or resilience.Off for no limit; leave the option out for the default, 3"},
		{"WithMaxElapsed(0)", func() retry.Option { return retry.WithMaxElapsed(0) },
			"retry: WithMaxElapsed(0s): the bound must be > 0; leave the option out for no bound"},
		{"WithMaxElapsed(-1s)", func() retry.Option { return retry.WithMaxElapsed(-time.Second) },
			"retry: WithMaxElapsed(-1s): the bound must be > 0; leave the option out for no bound"},
		{"WithMaxWait(0)", func() retry.Option { return retry.WithMaxWait(0) },
			"retry: WithMaxWait(0s): the wait must be > 0, or resilience.Off for no cap; leave the option out for the default"},
		{"WithMaxRefusalWait(0)", func() retry.Option { return retry.WithMaxRefusalWait(0) },
			"retry: WithMaxRefusalWait(0s): the wait must be > 0, or resilience.Off for no bound"},
		{"WithBackoff(zero)", func() retry.Option { return retry.WithBackoff(backoff.Schedule{}) },
			"retry: WithBackoff(backoff.Schedule{}): the zero Schedule is not set; use backoff.Constant(0) for no wait, or leave the option out for the default"},
		{"WithName(invalid UTF-8)", func() retry.Option { return retry.WithName("x\xff") },
			`retry: WithName("x\xff"): name must be valid UTF-8`},
		{"WithClock(nil)", func() retry.Option { return retry.WithClock(nil) },
			"retry: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"},
	} {
		if got := panicString(func() { tc.opt() }); got != tc.want {
			t.Errorf("%s panicked with %q, want %q", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		opts []retry.Option
		want string
	}{
		{"WithAttempts(Off) alone", []retry.Option{retry.WithAttempts(resilience.Off)},
			"retry: Attempts Off (no limit) needs a MaxElapsed > 0, got 0s"},
		{"nil option", []retry.Option{nil}, "retry: New option must not be nil"},
	} {
		if got := panicString(func() { retry.New[int](tc.opts...) }); got != tc.want {
			t.Errorf("%s: New panicked with %q, want %q", tc.name, got, tc.want)
		}
	}
	// The options that switch a setting off take Off.
	_ = retry.New[int](retry.WithAttempts(resilience.Off), retry.WithMaxElapsed(time.Second),
		retry.WithMaxWait(resilience.Off), retry.WithMaxRefusalWait(resilience.Off))
	// The least durations they take: 1ns.
	for name, opt := range map[string]func() retry.Option{
		"WithMaxElapsed(1ns)":     func() retry.Option { return retry.WithMaxElapsed(time.Nanosecond) },
		"WithMaxWait(1ns)":        func() retry.Option { return retry.WithMaxWait(time.Nanosecond) },
		"WithMaxRefusalWait(1ns)": func() retry.Option { return retry.WithMaxRefusalWait(time.Nanosecond) },
	} {
		if got := panicString(func() { opt() }); got != "" {
			t.Errorf("%s panicked with %q, want no panic", name, got)
		}
	}
}

func TestZeroBudgetIsRejected(t *testing.T) {
	want := "retry: Budget must be made by NewBudget, got a zero Budget"
	c := retry.Config{Budget: &retry.Budget{}}
	if got := errString(c.Validate()); got != want {
		t.Errorf("Validate() = %q, want %q", got, want)
	}
	if got := panicString(func() { retry.New[int](retry.WithBudget(&retry.Budget{})) }); got != want {
		t.Errorf("New panicked with %q, want %q", got, want)
	}
}

// checkDefaultWaits runs n executions of p that fail every attempt and
// checks that each makes 3 attempts with the default backoff's waits:
// full jitter, wait k within [0, 100ms × 2^(k-1)], not all 0.
func checkDefaultWaits(t *testing.T, name string, opts ...retry.Option) {
	t.Helper()
	clk := newSleeper()
	p := retry.New[int](append([]retry.Option{retry.WithClock(clk)}, opts...)...)
	var positive int
	for range 20 {
		clk.slept = nil
		s := &script{errs: fails(10, errBoom)}
		_, _ = p.Do(context.Background(), s.op)
		if s.calls != 3 || len(clk.slept) != 2 {
			t.Fatalf("%s: %d calls, waits %v; want the default 3 attempts and 2 waits", name, s.calls, clk.slept)
		}
		for i, d := range clk.slept {
			if hi := 100 * time.Millisecond << i; d < 0 || d > hi {
				t.Errorf("%s: wait %d = %v, want full jitter within [0, %v]", name, i+1, d, hi)
			}
			if d > 0 {
				positive++
			}
		}
	}
	if positive == 0 {
		t.Errorf("%s: 40 waits all 0s, want the default backoff's", name)
	}
}

// Config{} is the default configuration, and so is each zero field.
func TestZeroConfigIsTheDefault(t *testing.T) {
	checkDefaultWaits(t, "New()")
	checkDefaultWaits(t, "WithConfig(Config{})", retry.WithConfig(retry.Config{}))
}

// Regression: WithConfig replaced the defaults, so a Config
// that set only Attempts retried with 0s waits.
func TestWithConfigKeepsTheDefaults(t *testing.T) {
	checkDefaultWaits(t, "WithConfig(Config{Attempts: 3})", retry.WithConfig(retry.Config{Attempts: 3}))
}

// WithConfig sets only the fields it has; it never erases an earlier
// option. Options after it override it as usual.
func TestWithConfigSetsOnlyItsNonZeroFields(t *testing.T) {
	clk := newSleeper()
	var hooks int
	p := retry.New[int](retry.WithAttempts(5), retry.WithBackoff(backoff.Constant(time.Second)), retry.WithClock(clk),
		retry.WithOnRetry(func(int, error, time.Duration) { hooks++ }),
		retry.WithConfig(retry.Config{MaxElapsed: time.Minute}))
	s := &script{errs: fails(10, errBoom)}
	_, err := p.Do(context.Background(), s.op)
	if s.calls != 5 || hooks != 4 {
		t.Errorf("%d calls, %d hooks; want the earlier WithAttempts(5) and WithOnRetry kept", s.calls, hooks)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, time.Second, time.Second, time.Second}, clk.slept); diff != "" {
		t.Errorf("waits mismatch, want the earlier WithBackoff kept (-want +got):\n%s", diff)
	}
	if want := "retry: gave up after 5 attempts: boom"; errString(err) != want {
		t.Errorf("err = %v, want %q", err, want)
	}

	// A later option wins over WithConfig, and WithConfig over an earlier one.
	c := retry.Config{Attempts: 4, Backoff: backoff.Constant(0)}
	for _, tc := range []struct {
		name string
		opts []retry.Option
		want int
	}{
		{"WithAttempts(2), WithConfig(4 attempts)", []retry.Option{retry.WithAttempts(2), retry.WithConfig(c)}, 4},
		{"WithConfig(4 attempts), WithAttempts(2)", []retry.Option{retry.WithConfig(c), retry.WithAttempts(2)}, 2},
	} {
		s := &script{errs: fails(10, errBoom)}
		_, _ = retry.New[int](tc.opts...).Do(context.Background(), s.op)
		if s.calls != tc.want {
			t.Errorf("%s: %d calls, want %d", tc.name, s.calls, tc.want)
		}
	}
}

// scheduleCmp compares backoff.Schedule values by ==, as the package
// documents them (immutable values).
var scheduleCmp = cmp.Comparer(func(a, b backoff.Schedule) bool { return a == b })

func TestConfigJSONRoundTrip(t *testing.T) {
	in := retry.Config{
		Name:       "prices",
		Attempts:   resilience.Off,
		MaxElapsed: 5 * time.Second,
		Backoff:    backoff.Exponential(50*time.Millisecond, 1.5, 2*time.Second).WithJitter(backoff.Equal),
		MaxWait:    resilience.Off,
		RetryIf:    func(error) bool { return true },
		OnRetry:    func(int, error, time.Duration) {},
		Observer:   telemetry.ObserverFunc(func(telemetry.Event) {}),
		Clock:      clock.NewFake(),
		Budget:     retry.NewBudget(retry.BudgetConfig{}),
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"Name":"prices","Attempts":-1,"MaxElapsed":"5s",` +
		`"Backoff":{"Kind":"exponential","Base":"50ms","Multiplier":1.5,"Max":"2s","Jitter":"equal"},"MaxWait":"off"}`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	var out retry.Config
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	// Funcs, the observer, the clock and the budget are not serialised.
	in.RetryIf, in.OnRetry, in.Observer, in.Clock, in.Budget = nil, nil, nil, nil, nil
	if diff := cmp.Diff(in, out, scheduleCmp); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	if data, err := json.Marshal(retry.Config{}); err != nil || string(data) != "{}" {
		t.Errorf("Marshal(Config{}) = %s, %v; want {}, nil", data, err)
	}
}

func TestConfigJSONErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"Attempts": 3, "Retries": 2}`, `retry: Config: unknown field "Retries"`},
		{`{"MaxElapsed": 5}`, `retry: Config.MaxElapsed: a duration must be a string`},
		{`{"MaxElapsed": "soon"}`, `retry: Config.MaxElapsed: time: invalid duration`},
		{`{"Backoff": {"Kind": "exponential", "Base": "1s", "Multiplier": 0.5, "Max": "2s"}}`,
			`retry: Config.Backoff: backoff: Exponential multiplier must be >= 1, got 0.5`},
		{`{"RetryIf": true}`, `retry: Config: unknown field "RetryIf"`},
	} {
		var c retry.Config
		err := json.Unmarshal([]byte(tc.in), &c)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Unmarshal(%s) = %v; want an error starting %q", tc.in, err, tc.want)
		}
	}
}

func TestValidateBudget(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    retry.BudgetConfig
		want string
	}{
		{"zero: Finagle's defaults", retry.BudgetConfig{}, ""},
		{"explicit", retry.BudgetConfig{Ratio: 0.2, MinPerSecond: 10, Window: 10 * time.Second}, ""},
		{"ratio only", retry.BudgetConfig{MinPerSecond: resilience.Off}, ""},
		{"floor only", retry.BudgetConfig{Ratio: resilience.Off}, ""},
		{"negative ratio", retry.BudgetConfig{Ratio: -0.5},
			"retry: BudgetConfig.Ratio must be finite and > 0, 0 (the default, 0.2) or Off (-1, no ratio), got -0.5"},
		{"NaN ratio", retry.BudgetConfig{Ratio: math.NaN()},
			"retry: BudgetConfig.Ratio must be finite and > 0, 0 (the default, 0.2) or Off (-1, no ratio), got NaN"},
		{"infinite ratio", retry.BudgetConfig{Ratio: math.Inf(1)},
			"retry: BudgetConfig.Ratio must be finite and > 0, 0 (the default, 0.2) or Off (-1, no ratio), got +Inf"},
		{"negative floor", retry.BudgetConfig{MinPerSecond: -2},
			"retry: BudgetConfig.MinPerSecond must be finite and > 0, 0 (the default, 10) or Off (-1, no floor), got -2"},
		{"infinite floor", retry.BudgetConfig{MinPerSecond: math.Inf(1)},
			"retry: BudgetConfig.MinPerSecond must be finite and > 0, 0 (the default, 10) or Off (-1, no floor), got +Inf"},
		{"negative window", retry.BudgetConfig{Window: -time.Second},
			"retry: BudgetConfig.Window must be > 0, or 0 (the default, 10s), got -1s"},
		{"nothing allowed", retry.BudgetConfig{Ratio: resilience.Off, MinPerSecond: resilience.Off},
			"retry: BudgetConfig allows no retry at all: Ratio and MinPerSecond are both Off"},
	} {
		if got := errString(tc.c.Validate()); got != tc.want {
			t.Errorf("%s: Validate() = %q, want %q", tc.name, got, tc.want)
		}
		if got := panicString(func() { retry.NewBudget(tc.c) }); got != tc.want {
			t.Errorf("%s: NewBudget panicked with %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestBudgetConfigJSONRoundTrip(t *testing.T) {
	in := retry.BudgetConfig{Ratio: 0.1, MinPerSecond: resilience.Off, Window: 30 * time.Second, Clock: clock.NewFake()}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"Ratio":0.1,"MinPerSecond":-1,"Window":"30s"}`, string(data)); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	var out retry.BudgetConfig
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	in.Clock = nil // not serialised
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	var bad retry.BudgetConfig
	if err := json.Unmarshal([]byte(`{"Percent": 20}`), &bad); err == nil ||
		err.Error() != `retry: BudgetConfig: unknown field "Percent"` {
		t.Errorf("Unmarshal of an unknown field = %v, want an error naming it", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// panicString runs f and returns what it panicked with, as a string ("" if
// it did not panic).
func panicString(f func()) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = r.(string)
		}
	}()
	f()
	return ""
}
