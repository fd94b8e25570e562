package exporttest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// fakeTB records the first failure of a helper, which it ends as t.Fatal
// does (runtime.Goexit), the errors it reports and goes on from, and the
// functions that marked themselves
// helpers; any method it does not define panics (nil TB).
type fakeTB struct {
	testing.TB
	failed  string
	errors  []string // Errorf's messages: the helper goes on
	helpers []string
}

func (f *fakeTB) Helper() {
	pc, _, _, _ := runtime.Caller(1)
	name := runtime.FuncForPC(pc).Name()
	f.helpers = append(f.helpers, name[strings.LastIndex(name, "/")+1:])
}
func (f *fakeTB) Fatal(args ...any) {
	f.failed = fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// runOutage runs Outage on a goroutine of its own with a fakeTB, and
// returns its failure ("" if none); a script that never ends fails t
// after a bound far beyond the milliseconds it takes.
func runOutage(t *testing.T, clk *clock.Fake, reg *telemetry.Registry, obs telemetry.Observer, call, attempt resilience.Policy[string]) string {
	t.Helper()
	tb := &fakeTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		exporttest.Outage(tb, clk, reg, obs, call, attempt, downError{})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Outage did not return after 2s: a wait on the fake clock that nobody advances")
	}
	return tb.failed
}

// layer is a policy named name whose calls go through f.
func layer(name string, f func(n int, ctx context.Context, next resilience.Next[string]) (string, error)) resilience.Policy[string] {
	n := 0
	return resilience.New(name, func(ctx context.Context, next resilience.Next[string]) (string, error) {
		n++
		return f(n, ctx, next)
	})
}

var nop = telemetry.ObserverFunc(func(telemetry.Event) {})

func pass(n int, ctx context.Context, next resilience.Next[string]) (string, error) {
	return next.Call(ctx)
}

// TestOutageScript: the script takes the time its doc gives (four healthy
// calls of 10ms, two failed attempts of 20ms, the 10s cooldown), and the
// fake guards hold the values it gives.
func TestOutageScript(t *testing.T) {
	clk := clock.NewFake()
	start := clk.Now()
	reg := telemetry.NewRegistry()
	if failed := runOutage(t, clk, reg, nop, layer("call", pass), layer("attempt", pass)); failed != "" {
		t.Fatalf("Outage failed: %s", failed)
	}
	if got, want := clk.Now().Sub(start), 10*time.Second+4*10*time.Millisecond+2*20*time.Millisecond; got != want {
		t.Errorf("the script took %v on the fake clock, want %v", got, want)
	}
	got := map[string]map[string]float64{}
	for _, s := range reg.Snapshots() {
		if s.Kind == breaker.Kind {
			continue
		}
		v := map[string]float64{"refused": float64(s.Refused)}
		for _, x := range s.Values {
			v[x.Name] = x.Value
		}
		got[s.Name] = v
	}
	want := map[string]map[string]float64{
		"db":  {"limit": 8, "in_flight": 3, "queued": 2, "refused": 5},
		"api": {"rate": 100, "burst": 20, "tokens": -1.5, "refused": 7},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fake guards mismatch (-want +got):\n%s", diff)
	}
}

// TestOutageFails: Outage fails t at once when a call's error is not the
// script's, when the breaker does not end closed, and when a guard cannot
// be registered.
func TestOutageFails(t *testing.T) {
	errOther := errors.New("other")
	for _, tc := range []struct {
		name          string
		call, attempt func(n int, ctx context.Context, next resilience.Next[string]) (string, error)
		reg           func() *telemetry.Registry
		want          string
	}{{
		name: "an error where none is due",
		call: func(n int, ctx context.Context, next resilience.Next[string]) (string, error) {
			if n == 1 {
				return "", errOther
			}
			return next.Call(ctx)
		},
		want: "call: err = other, want <nil>",
	}, {
		name: "another error than the one due",
		call: func(n int, ctx context.Context, next resilience.Next[string]) (string, error) {
			if n == 3 {
				return "", errOther
			}
			return next.Call(ctx)
		},
		want: "call: err = other, want down",
	}, {
		name: "the breaker not closed",
		attempt: func(n int, ctx context.Context, next resilience.Next[string]) (string, error) {
			if n >= 6 { // the trial and the last call do not reach the breaker
				return "ok", nil
			}
			return next.Call(ctx)
		},
		want: "breaker state = ",
	}, {
		name: "a guard not registered",
		reg: func() *telemetry.Registry {
			reg := telemetry.NewRegistry()
			if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: breaker.Kind, Name: "prices"}}); err != nil {
				t.Fatal(err)
			}
			return reg
		},
		want: "name already registered: breaker \"prices\"",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			call, attempt, reg := tc.call, tc.attempt, telemetry.NewRegistry()
			if call == nil {
				call = pass
			}
			if attempt == nil {
				attempt = pass
			}
			if tc.reg != nil {
				reg = tc.reg()
			}
			failed := runOutage(t, clock.NewFake(), reg, nop, layer("call", call), layer("attempt", attempt))
			if !strings.Contains(failed, tc.want) {
				t.Fatalf("Outage failed with %q, want a failure containing %q", failed, tc.want)
			}
		})
	}
}
