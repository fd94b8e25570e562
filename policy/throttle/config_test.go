package throttle_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/throttle"
)

func TestValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		c    throttle.Config
		want string
	}{
		{"zero: the defaults", throttle.Config{}, ""},
		{"full", throttle.Config{K: 1.5, Window: time.Minute, Name: "x"}, ""},
		{"K 1", throttle.Config{K: 1}, ""},
		{"K below 1", throttle.Config{K: 0.5}, "throttle: K must be finite and >= 1, or 0 for the default 2, got 0.5"},
		{"K Off", throttle.Config{K: -1}, "throttle: K must be finite and >= 1, or 0 for the default 2, got -1"},
		{"K infinite", throttle.Config{K: math.Inf(1)}, "throttle: K must be finite and >= 1, or 0 for the default 2, got +Inf"},
		{"negative Window", throttle.Config{Window: -time.Second}, "throttle: Window must be at least 16ns, or 0 for the default 2m, got -1s"},
		{"tiny Window", throttle.Config{Window: 15}, "throttle: Window must be at least 16ns, or 0 for the default 2m, got 15ns"},
		{"Window 1ns", throttle.Config{Window: 1}, "throttle: Window must be at least 16ns, or 0 for the default 2m, got 1ns"},
		{"Window at its minimum", throttle.Config{Window: 16}, ""},
		{"K the largest float64", throttle.Config{K: math.MaxFloat64}, ""},
	} {
		got := ""
		if err := tt.c.Validate(); err != nil {
			got = err.Error()
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Validate() mismatch (-want +got):\n%s", tt.name, diff)
		}
		if diff := cmp.Diff(tt.want, panicOf(func() { throttle.New(throttle.WithConfig(tt.c)) })); diff != "" {
			t.Errorf("%s: New panic mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
	if diff := cmp.Diff("throttle: New option must not be nil", panicOf(func() { throttle.New(nil) })); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// WithConfig sets only the fields that are not zero; options apply in
// order.
func TestOptionsApplyInOrder(t *testing.T) {
	probability := func(opts ...throttle.Option) float64 {
		th := throttle.New(append([]throttle.Option{throttle.WithClock(clock.NewFake()), throttle.WithRandom(never)}, opts...)...)
		send(th, 10, nil)
		send(th, 20, fmt.Errorf("503"))
		return th.Stats().Probability
	}
	// 30 requests, 10 accepted: (30 − 10K) / 31.
	for _, tt := range []struct {
		name string
		opts []throttle.Option
		k    float64
	}{
		{"default", nil, 2},
		{"K", []throttle.Option{throttle.WithK(1.5)}, 1.5},
		{"a Config without K keeps the option's", []throttle.Option{throttle.WithK(1.5), throttle.WithConfig(throttle.Config{Name: "x"})}, 1.5},
		{"a Config's K replaces it", []throttle.Option{throttle.WithK(1.5), throttle.WithConfig(throttle.Config{K: 1})}, 1},
		{"an option after the Config", []throttle.Option{throttle.WithConfig(throttle.Config{K: 1}), throttle.WithK(2.5)}, 2.5},
	} {
		want := math.Max(0, (30-10*tt.k)/31)
		if got := probability(tt.opts...); math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: probability %v, want %v (K %v)", tt.name, got, want, tt.k)
		}
	}
}

func TestConfigJSON(t *testing.T) {
	c := throttle.Config{K: 1.5, Window: 30 * time.Second, Name: "payments", Clock: clock.NewFake(), Random: never}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"K":1.5,"Window":"30s","Name":"payments"}`, string(b)); diff != "" {
		t.Fatalf("MarshalJSON mismatch (-want +got):\n%s", diff)
	}
	var got throttle.Config
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	c.Clock, c.Random = nil, nil
	if diff := cmp.Diff(c, got, cmpopts.IgnoreFields(throttle.Config{}, "Random")); diff != "" || got.Random != nil {
		t.Fatalf("round trip mismatch (-want +got):\n%s", diff)
	}
	for in, want := range map[string]string{
		`{"Window":30}`: `throttle: Config.Window: a duration must be a string such as "250ms" or "off", got 30`,
		`{"Random":1}`:  `throttle: Config: unknown field "Random"`,
		`{"K":"two"}`:   `throttle: Config.K: a number, "+Inf" or "-Inf", got "two"`,
	} {
		var c throttle.Config
		if err := json.Unmarshal([]byte(in), &c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Unmarshal(%s): %v, want %q", in, err, want)
		}
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

// WithK(0) and WithWindow(0) silently meant the defaults: they panic
// naming the value.
func TestOptionsPanicOnZero(t *testing.T) {
	for _, tc := range []struct {
		f    func()
		want string
	}{
		{func() { throttle.WithK(0) }, "throttle: WithK(0): K must be finite and >= 1; leave the option out for the default, 2"},
		{func() { throttle.WithWindow(0) }, "throttle: WithWindow(0s): the window must be > 0; leave the option out for the default, 2m0s"},
		{func() { throttle.WithName("\xff") }, `throttle: WithName("\xff"): name must be valid UTF-8`},
		{func() { throttle.WithClock(nil) }, "throttle: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"},
	} {
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			tc.f()
			return "no panic"
		}()
		if got != tc.want {
			t.Errorf("panicked with %q, want %q", got, tc.want)
		}
	}
}
