package hedge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// starts runs one call of p whose attempts all take a second, and returns
// when each attempt started.
func starts(t *testing.T, p func() resilience.Policy[int]) []time.Duration {
	t.Helper()
	var got []time.Duration
	bubbleWithin(t, func(t *testing.T) {
		steps := make([]step, 10)
		for i := range steps {
			steps[i] = step{d: time.Second, v: i}
		}
		l := newLog(steps...)
		if _, err := p().Do(context.Background(), l.op); err != nil {
			t.Errorf("Do: %v", err)
		}
		got = l.started
	})
	return got
}

// A zero field is the field's default: MaxHedges 0 means 1, Config{} is the
// default configuration, and WithConfig sets only the non-zero fields of
// its Config, so it never erases New's delay, an earlier option or a
// default.
func TestZeroFieldsAreDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    func() resilience.Policy[int]
		want []time.Duration
	}{
		{"no options", func() resilience.Policy[int] { return hedge.New[int](50 * ms) }, []time.Duration{0, 50 * ms}},
		{"MaxHedges 0", func() resilience.Policy[int] {
			return hedge.New[int](50*ms, hedge.WithConfig(hedge.Config[int]{MaxHedges: 0}))
		}, []time.Duration{0, 50 * ms}},
		{"Config{}", func() resilience.Policy[int] { return hedge.New[int](50*ms, hedge.WithConfig(hedge.Config[int]{})) }, []time.Duration{0, 50 * ms}},
		{"Config keeps New's delay", func() resilience.Policy[int] {
			return hedge.New[int](50*ms, hedge.WithConfig(hedge.Config[int]{MaxHedges: 2}))
		}, []time.Duration{0, 50 * ms, 100 * ms}},
		{"Config keeps an earlier option", func() resilience.Policy[int] {
			return hedge.New[int](50*ms, hedge.WithMaxHedges(3), hedge.WithConfig(hedge.Config[int]{Delay: 20 * ms}))
		}, []time.Duration{0, 20 * ms, 40 * ms, 60 * ms}},
		{"a later option overrides Config", func() resilience.Policy[int] {
			return hedge.New[int](50*ms, hedge.WithConfig(hedge.Config[int]{Delay: 20 * ms, MaxHedges: 3}), hedge.WithMaxHedges(1))
		}, []time.Duration{0, 20 * ms}},
		{"Config keeps an earlier quantile's bounds", func() resilience.Policy[int] {
			return hedge.New[int](50*ms, hedge.WithQuantile(0.95), hedge.WithMinDelay(70*ms), hedge.WithConfig(hedge.Config[int]{MaxHedges: 2}))
		}, []time.Duration{0, 70 * ms, 140 * ms}},
		{"a budget of one hedge", func() resilience.Policy[int] {
			return hedge.New[int](50*ms, hedge.WithMaxHedges(3), hedge.WithBudget(0.1))
		}, []time.Duration{0, 50 * ms}},
	} {
		if diff := cmp.Diff(tc.want, starts(t, tc.p)); diff != "" {
			t.Errorf("%s: start times mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestWithConfigKeepsAnEarlierAccept(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		accepted := 0
		p := hedge.New[int](time.Hour,
			hedge.WithAccept(func(int, error) bool { accepted++; return true }),
			hedge.WithConfig(hedge.Config[int]{MaxHedges: 2}),
			hedge.WithClock(clock.NewFake()))
		if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 0, errA }); err != errA || accepted != 1 {
			t.Errorf("Do = %v after %d Accept calls; want the accepted errA after 1", err, accepted)
		}
	})
}

// A Config's Accept replaces the default, as WithAccept does: the error it
// accepts ends the race.
func TestWithConfigSetsAccept(t *testing.T) {
	bubbleWithin(t, func(t *testing.T) {
		p := hedge.New[int](time.Hour,
			hedge.WithConfig(hedge.Config[int]{Accept: func(_ int, err error) bool { return err == nil || err == errA }}),
			hedge.WithClock(clock.NewFake()))
		l := newLog(step{d: ms, err: errA}, step{d: ms, v: 2})
		if _, err := p.Do(context.Background(), l.op); err != errA || len(l.started) != 1 {
			t.Errorf("Do = %v after %d attempts; want the accepted errA after 1", err, len(l.started))
		}
	})
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		c    hedge.Config[int]
		want string
	}{
		{hedge.Config[int]{}, ""},
		{hedge.Config[int]{Delay: ms, MaxHedges: hedge.MaxHedgesLimit}, ""},
		{hedge.Config[int]{Delay: ms, MaxHedges: hedge.MaxHedgesLimit + 1}, "hedge: MaxHedges must be in [1, 10], or 0 for the default 1, got 11"},
		{hedge.Config[int]{Delay: ms, MaxHedges: 1 << 40}, "hedge: MaxHedges must be in [1, 10], or 0 for the default 1, got 1099511627776"},
		{hedge.Config[int]{Delay: -ms}, "hedge: Delay must be > 0, or 0 for New's delay, got -1ms"},
		{hedge.Config[int]{Delay: -1}, "hedge: Delay must be > 0, or 0 for New's delay, got off"}, // "off" in JSON
		{hedge.Config[int]{MaxHedges: -1}, "hedge: MaxHedges must be in [1, 10], or 0 for the default 1, got -1"},
		{hedge.Config[int]{Delay: -ms, MaxHedges: -1}, "hedge: Delay must be > 0, or 0 for New's delay, got -1ms"},
		{hedge.Config[int]{MaxWait: resilience.Off}, ""},
		{hedge.Config[int]{MaxWait: resilience.Never}, ""},
		{hedge.Config[int]{MaxWait: -2}, "hedge: MaxWait must be > 0, 0 for the Delay or Off (-1) for no cap, got -2ns"},
		{hedge.Config[int]{Quantile: 0.95, MinDelay: ms, MaxDelay: time.Second, Budget: 0.1}, ""},
		{hedge.Config[int]{Quantile: 0.95, MinDelay: ms, MaxDelay: ms}, ""},
		{hedge.Config[int]{Budget: 3}, ""},
		{hedge.Config[int]{Budget: 1e-6}, ""},            // the resolution itself
		{hedge.Config[int]{Budget: math.MaxFloat64}, ""}, // the largest finite budget
		{hedge.Config[int]{Quantile: 1}, "hedge: Quantile must be in (0, 1), or 0 for a fixed delay, got 1"},
		{hedge.Config[int]{Quantile: -0.5}, "hedge: Quantile must be in (0, 1), or 0 for a fixed delay, got -0.5"},
		{hedge.Config[int]{Quantile: 0.9, MinDelay: -ms}, "hedge: MinDelay must be >= 0, got -1ms"},
		{hedge.Config[int]{Quantile: 0.9, MaxDelay: -1}, "hedge: MaxDelay must be >= 0 (0 means no bound), got -1ns"},
		{hedge.Config[int]{Quantile: 0.9, MinDelay: 2 * ms, MaxDelay: ms}, "hedge: MaxDelay must be >= MinDelay, got MaxDelay 1ms and MinDelay 2ms"},
		{hedge.Config[int]{MaxDelay: ms}, "hedge: MinDelay and MaxDelay need a Quantile, got Quantile 0"},
		// The smallest durations count as set: 1ns is a bound, not "no bound".
		{hedge.Config[int]{Quantile: 0.9, MinDelay: 2, MaxDelay: 1}, "hedge: MaxDelay must be >= MinDelay, got MaxDelay 1ns and MinDelay 2ns"},
		{hedge.Config[int]{MinDelay: 1}, "hedge: MinDelay and MaxDelay need a Quantile, got Quantile 0"},
		{hedge.Config[int]{MaxDelay: 1}, "hedge: MinDelay and MaxDelay need a Quantile, got Quantile 0"},
		{hedge.Config[int]{Budget: -1}, "hedge: Budget must be finite and > 0, or 0 for no budget, got -1"},
		{hedge.Config[int]{Budget: math.Inf(1)}, "hedge: Budget must be finite and > 0, or 0 for no budget, got +Inf"},
		{hedge.Config[int]{Budget: 1e-7}, "hedge: Budget must be at least 1e-6 (the budget counts in millionths of a hedge), or 0 for no budget, got 1e-07"},
	} {
		got := ""
		if err := tc.c.Validate(); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%+v.Validate() = %q, want %q", tc.c, got, tc.want)
		}
		if tc.want == "" {
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != tc.want {
					t.Errorf("New with %+v panicked with %v, want %q", tc.c, r, tc.want)
				}
			}()
			hedge.New[int](time.Second, hedge.WithConfig(tc.c))
		}()
	}
	for _, d := range []time.Duration{0, -ms} {
		want := fmt.Sprintf("hedge: Delay must be > 0, got %v", d)
		func() {
			defer func() {
				if r := recover(); r != want {
					t.Errorf("New(%v) panicked with %v, want %q", d, r, want)
				}
			}()
			hedge.New[int](d)
		}()
	}
}

func TestConfigJSONRoundTrip(t *testing.T) {
	full := hedge.Config[string]{
		Name:      "profiles",
		Delay:     20 * ms,
		MaxHedges: 3,
		MaxWait:   2 * time.Second,
		Accept:    func(string, error) bool { return true },
		Clock:     clock.NewFake(),
		Quantile:  0.95,
		MinDelay:  5 * ms,
		MaxDelay:  time.Second,
		Budget:    0.1,
		Observer:  telemetry.NewCounter(),
	}
	data, err := json.Marshal(full)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(`{"Name":"profiles","Delay":"20ms","MaxHedges":3,"MaxWait":"2s","Quantile":0.95,"MinDelay":"5ms","MaxDelay":"1s","Budget":0.1}`, string(data)); diff != "" {
		t.Errorf("Marshal mismatch (-want +got):\n%s", diff)
	}
	var got hedge.Config[string]
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	// The func, the clock and the observer are not serialised.
	want := full
	want.Accept, want.Clock, want.Observer = nil, nil, nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	if data, err := json.Marshal(hedge.Config[int]{}); err != nil || string(data) != "{}" {
		t.Errorf("Marshal(Config{}) = %s, %v; want {}", data, err)
	}
	off := hedge.Config[int]{MaxWait: resilience.Off}
	if data, err := json.Marshal(off); err != nil || string(data) != `{"MaxWait":"off"}` {
		t.Errorf("Marshal(%+v) = %s, %v; want {\"MaxWait\":\"off\"}", off, data, err)
	}
	var back hedge.Config[int]
	if err := json.Unmarshal([]byte(`{"MaxWait":"off"}`), &back); err != nil || back.MaxWait != resilience.Off {
		t.Errorf("Unmarshal({\"MaxWait\":\"off\"}) = %+v, %v; want MaxWait Off", back, err)
	}
	for in, want := range map[string]string{
		`{"Delay": 20}`:        "hedge: ",
		`{"MaxHedges": "two"}`: "hedge: ",
		`{"Accept": true}`:     `unknown field "Accept"`,
		`{"Observer": {}}`:     `unknown field "Observer"`,
		`{"Delays": "1s"}`:     `unknown field "Delays"`,
	} {
		var c hedge.Config[int]
		if err := json.Unmarshal([]byte(in), &c); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Unmarshal(%s) = %v, want an error with %q", in, err, want)
		}
	}
}
