package ratelimit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

func TestValidate(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name string
		c    ratelimit.Config
		want string
	}{
		{"zero: every default, Rate and Burst from New", ratelimit.Config{}, ""},
		{"valid", ratelimit.Config{Rate: 10, Burst: 1}, ""},
		{"rate only: the burst from New", ratelimit.Config{Rate: 10}, ""},
		{"burst only: the rate from New", ratelimit.Config{Burst: 5}, ""},
		{"Off rate: no refill", ratelimit.Config{Rate: resilience.Off, Burst: 5}, ""},
		{"one per ns", ratelimit.Config{Rate: 1e9, Burst: 1}, ""},
		{"inf", ratelimit.Config{Rate: inf}, ""},
		{"largest burst", ratelimit.Config{Rate: 1, Burst: 1 << 52}, ""},
		{"all options", ratelimit.Config{Rate: 1, Burst: 1, MaxWait: time.Second, MaxKeys: 3, Name: "api", Clock: clock.NewFake()}, ""},
		{"NaN", ratelimit.Config{Rate: math.NaN(), Burst: 1},
			"ratelimit: Rate must be a number of events per second, got NaN"},
		{"negative rate", ratelimit.Config{Rate: -2, Burst: 1},
			"ratelimit: Rate must be >= 0 events per second, or Off (no refill), got -2"},
		{"slightly negative rate", ratelimit.Config{Rate: -0.5, Burst: 1},
			"ratelimit: Rate must be >= 0 events per second, or Off (no refill), got -0.5"},
		{"-Inf", ratelimit.Config{Rate: math.Inf(-1), Burst: 1},
			"ratelimit: Rate must be >= 0 events per second, or Off (no refill), got -Inf"},
		{"too fast", ratelimit.Config{Rate: 2e9, Burst: 1},
			"ratelimit: Rate must be at most 1e9 events per second (one per nanosecond) or +Inf, got 2e+09"},
		{"negative burst", ratelimit.Config{Rate: 10, Burst: -2},
			"ratelimit: Burst must be >= 1 with a finite Rate, got -2"},
		{"Off burst", ratelimit.Config{Burst: -1},
			"ratelimit: Burst must be >= 1 with a finite Rate, got -1"},
		{"negative burst, inf", ratelimit.Config{Rate: inf, Burst: -2},
			"ratelimit: Burst must be >= 0, got -2"},
		{"huge burst", ratelimit.Config{Rate: 1, Burst: 1<<52 + 1},
			"ratelimit: Burst must be at most 4503599627370496 (1<<52), got 4503599627370497"},
		{"negative wait", ratelimit.Config{MaxWait: -time.Second},
			"ratelimit: MaxWait must be >= 0 (0 means no limit), got -1s"},
		{"Off wait", ratelimit.Config{MaxWait: resilience.Off},
			"ratelimit: MaxWait must be >= 0 (0 means no limit), got off"},
		{"negative keys", ratelimit.Config{MaxKeys: -2},
			"ratelimit: MaxKeys must be >= 0 (0 means 8192), got -2"},
		{"Off keys: a Keyed is always bounded", ratelimit.Config{MaxKeys: resilience.Off},
			"ratelimit: MaxKeys must be >= 0 (0 means 8192), got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if err := tt.c.Validate(); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Fatalf("Validate() = %q, want %q", got, tt.want)
			}
			// New and NewKeyed, given valid arguments, panic with the same
			// message.
			for name, build := range map[string]func(){
				"New":      func() { ratelimit.New(10, 1, ratelimit.WithConfig(tt.c)) },
				"NewKeyed": func() { ratelimit.NewKeyed[string](10, 1, ratelimit.WithConfig(tt.c)) },
			} {
				if diff := cmp.Diff(tt.want, panicOf(build)); diff != "" {
					t.Errorf("%s panic mismatch (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

// panicOf returns what f panics with, or "" if it returns.
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

// New validates the configuration its arguments and options build.
func TestNewValidatesWhatItBuilds(t *testing.T) {
	tests := []struct {
		name  string
		build func()
		want  string
	}{
		{"no burst", func() { ratelimit.New(10, 0) },
			"ratelimit: Burst must be >= 1 with a finite Rate, got 0"},
		{"no burst, a Config without one", func() { ratelimit.New(10, 0, ratelimit.WithConfig(ratelimit.Config{Rate: 5})) },
			"ratelimit: Burst must be >= 1 with a finite Rate, got 0"},
		{"no burst, a Config sets it", func() { ratelimit.New(10, 0, ratelimit.WithConfig(ratelimit.Config{Burst: 3})) }, ""},
		{"no burst, a Config makes the rate +Inf", func() { ratelimit.New(10, 0, ratelimit.WithConfig(ratelimit.Config{Rate: math.Inf(1)})) }, ""},
		{"inf, no burst", func() { ratelimit.New(math.Inf(1), 0) }, ""},
		{"Off rate", func() { ratelimit.New(resilience.Off, 3) }, ""},
		{"negative rate", func() { ratelimit.New(-2, 1) },
			"ratelimit: Rate must be >= 0 events per second, or Off (no refill), got -2"},
		{"negative wait option", func() { ratelimit.New(1, 1, ratelimit.WithMaxWait(-time.Second)) },
			"ratelimit: MaxWait must be >= 0 (0 means no limit), got -1s"},
		{"negative keys option", func() { ratelimit.NewKeyed[int](1, 1, ratelimit.WithMaxKeys(-3)) },
			"ratelimit: MaxKeys must be >= 0 (0 means 8192), got -3"},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, panicOf(tt.build)); diff != "" {
			t.Errorf("%s: panic mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestEvery(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want float64
	}{
		{time.Second, 1},
		{100 * time.Millisecond, 10},
		{time.Nanosecond, 1e9},
		{time.Minute, 1.0 / 60},
		{0, math.Inf(1)},
	}
	for _, tt := range tests {
		if got := ratelimit.Every(tt.d); got != tt.want {
			t.Errorf("Every(%v) = %v, want %v", tt.d, got, tt.want)
		}
	}
	defer func() {
		if r := recover(); r != "ratelimit: Every interval must be >= 0, got -1s" {
			t.Fatalf("Every(-1s) panicked with %v", r)
		}
	}()
	ratelimit.Every(-time.Second)
}

func TestOptionsApplyInOrder(t *testing.T) {
	base := ratelimit.Config{Rate: 1, Burst: 1, Name: "cfg"}
	tests := []struct {
		name string
		opts []ratelimit.Option
		want string // the policy's layer name
	}{
		{"name", []ratelimit.Option{ratelimit.WithName("a"), ratelimit.WithName("b")}, "ratelimit(b)"},
		{"config then option", []ratelimit.Option{ratelimit.WithConfig(base), ratelimit.WithName("late")}, "ratelimit(late)"},
		{"option then config", []ratelimit.Option{ratelimit.WithName("early"), ratelimit.WithConfig(base)}, "ratelimit(cfg)"},
		{"unnamed", nil, "ratelimit"},
	}
	for _, tt := range tests {
		l := ratelimit.New(1, 1, tt.opts...)
		if got := ratelimit.Policy[int](l).String(); got != tt.want {
			t.Errorf("%s: layer %q, want %q", tt.name, got, tt.want)
		}
	}
}

// WithConfig sets only the Config's non-zero fields: it keeps New's rate
// and burst, earlier options and the defaults.
func TestWithConfigMerges(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 3, ratelimit.WithName("api"), ratelimit.WithClock(fake),
		ratelimit.WithConfig(ratelimit.Config{MaxWait: time.Minute}))
	if got := admitted(l, 10); got != 3 {
		t.Fatalf("admitted %d of 10, want New's burst of 3", got)
	}
	fake.Advance(time.Second)
	if got := admitted(l, 10); got != 1 {
		t.Fatalf("admitted %d of 10 a second later, want New's rate of 1 per second", got)
	}
	if got := ratelimit.Policy[int](l).String(); got != "ratelimit(api)" {
		t.Fatalf("layer %q: the Config erased the option's name", got)
	}

	// The Config's fields replace New's rate and burst where they are set.
	l = ratelimit.New(ratelimit.Every(time.Second), 3, ratelimit.WithClock(fake), ratelimit.WithConfig(ratelimit.Config{Burst: 5}))
	if got := admitted(l, 10); got != 5 {
		t.Fatalf("admitted %d of 10, want the Config's burst of 5", got)
	}
	l = ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake), ratelimit.WithConfig(ratelimit.Config{Rate: 10}))
	_ = l.Allow()
	fake.Advance(100 * time.Millisecond)
	if !l.Allow() {
		t.Fatal("the Config's rate of 10 per second did not refill a token in 100ms")
	}
}

// Off as the rate switches the refill off, in New and in a Config alike:
// the bucket gives its burst and then refuses for ever, with a "never" hint.
func TestRateOffIsNoRefill(t *testing.T) {
	fake := clock.NewFake()
	for name, l := range map[string]*ratelimit.Limiter{
		"New(Off)":      ratelimit.New(resilience.Off, 3, ratelimit.WithClock(fake)),
		"New(0)":        ratelimit.New(resilience.Off, 3, ratelimit.WithClock(fake)),
		"Config{Off}":   ratelimit.New(10, 3, ratelimit.WithClock(fake), ratelimit.WithConfig(ratelimit.Config{Rate: resilience.Off})),
		"Config{0} new": ratelimit.New(resilience.Off, 1, ratelimit.WithClock(fake), ratelimit.WithConfig(ratelimit.Config{Burst: 3})),
	} {
		if got := admitted(l, 10); got != 3 {
			t.Errorf("%s: admitted %d of 10, want the burst of 3", name, got)
		}
		fake.Advance(1000 * time.Hour)
		_, err := ratelimit.Policy[int](l).Do(t.Context(), func(context.Context) (int, error) { return 1, nil })
		if d, ok := resilience.RetryAfter(err); !errors.Is(err, ratelimit.ErrLimited) || !ok || d != resilience.Never {
			t.Errorf("%s: after 1000h: %v (Retry-After %v, %v); want refused with a never hint", name, err, d, ok)
		}
	}
}

// A full Config goes to JSON and back unchanged, but for the clock, which is
// not serialised; +Inf and Off rates too.
func TestConfigJSONRoundTrip(t *testing.T) {
	tests := []struct {
		in   ratelimit.Config
		json string
	}{
		{ratelimit.Config{Rate: 2.5, Burst: 10, MaxWait: 250 * time.Millisecond, MaxKeys: 1000, Name: "api", Clock: clock.NewFake()},
			`{"Rate":2.5,"Burst":10,"MaxWait":"250ms","MaxKeys":1000,"Name":"api"}`},
		{ratelimit.Config{Rate: math.Inf(1)}, `{"Rate":"+Inf"}`},
		{ratelimit.Config{Rate: resilience.Off, Burst: 3}, `{"Rate":-1,"Burst":3}`},
		{ratelimit.Config{}, `{}`},
	}
	for _, tt := range tests {
		data, err := json.Marshal(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.json, string(data)); diff != "" {
			t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
		}
		var out ratelimit.Config
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		tt.in.Clock = nil
		if diff := cmp.Diff(tt.in, out, cmpopts.EquateComparable()); diff != "" {
			t.Errorf("round trip of %s mismatch (-want +got):\n%s", tt.json, diff)
		}
	}
}

func TestConfigJSONErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"Brust": 8}`, `ratelimit: Config: unknown field "Brust"`},
		{`{"Clock": "real"}`, `ratelimit: Config: unknown field "Clock"`},
		{`{"Rate": "fast"}`, `ratelimit: Config.Rate: a number, "+Inf" or "-Inf", got "fast"`},
		{`{"MaxWait": 100}`, `ratelimit: Config.MaxWait: a duration must be a string such as "250ms" or "off", got 100`},
		{`{"Burst": 1.5}`, `ratelimit: Config.Burst: json: cannot unmarshal`},
	}
	for _, tt := range tests {
		var c ratelimit.Config
		err := json.Unmarshal([]byte(tt.in), &c)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("Unmarshal(%s) = %v; want an error starting %q", tt.in, err, tt.want)
		}
	}
}

// admitted calls Allow n times and counts the trues.
func admitted(l *ratelimit.Limiter, n int) int {
	k := 0
	for range n {
		if l.Allow() {
			k++
		}
	}
	return k
}

// Regression: New(0, n) silently meant "no refill" (200, 200, 200, then
// 429 for ever with no Retry-After). An explicit 0, in a constructor's
// rate, SetRate or an option, panics naming it and the value; no refill is
// resilience.Off. A Config that sets the rate replaces New's 0.
func TestExplicitZeroPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"New(0, 200)", func() { ratelimit.New(0, 200) },
			"ratelimit: New(0, 200): the rate must be > 0 events per second, +Inf for no limit, or resilience.Off for no refill"},
		{"NewKeyed(0, 5)", func() { ratelimit.NewKeyed[string](0, 5) },
			"ratelimit: NewKeyed(0, 5): the rate must be > 0 events per second, +Inf for no limit, or resilience.Off for no refill"},
		{"Limiter.SetRate(0)", func() { ratelimit.New(10, 1).SetRate(0) },
			"ratelimit: SetRate(0): the rate must be > 0 events per second, +Inf for no limit, or resilience.Off for no refill"},
		{"Keyed.SetRate(0)", func() { ratelimit.NewKeyed[string](10, 1).SetRate(0) },
			"ratelimit: SetRate(0): the rate must be > 0 events per second, +Inf for no limit, or resilience.Off for no refill"},
		{"WithMaxWait(0)", func() { ratelimit.WithMaxWait(0) },
			"ratelimit: WithMaxWait(0s): the wait must be > 0; leave the option out for no limit but the context's deadline"},
		{"WithMaxKeys(0)", func() { ratelimit.WithMaxKeys(0) },
			"ratelimit: WithMaxKeys(0): the keys must be >= 1; leave the option out for the default, 8192"},
		{"New(0) with a Config's rate", func() { ratelimit.New(0, 1, ratelimit.WithConfig(ratelimit.Config{Rate: 5})) }, "no panic"},
		{"New(Off, 1)", func() { ratelimit.New(resilience.Off, 1) }, "no panic"},
		{"WithClock(nil)", func() { ratelimit.WithClock(nil) },
			"ratelimit: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"},
		{"WithName of invalid UTF-8", func() { ratelimit.WithName("api\xff") },
			`ratelimit: WithName("api\xff"): name must be valid UTF-8`},
		{"a nil option", func() { ratelimit.New(1, 1, nil) }, "ratelimit: option must not be nil"},
		{"a nil option to NewKeyed", func() { ratelimit.NewKeyed[int](1, 1, nil) }, "ratelimit: option must not be nil"},
	} {
		got := func() (msg string) {
			defer func() {
				if r := recover(); r != nil {
					msg = fmt.Sprint(r)
				}
			}()
			tc.f()
			return "no panic"
		}()
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
