package resilienceotel_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resilienceotel"
)

// TestMeasureAttemptsBounded: a call of five attempts through a Measure
// bounded at 3 records attempts 1, 2 and 3, the third for attempts 3, 4
// and 5, so a retry without a limit cannot grow the series.
func TestMeasureAttemptsBounded(t *testing.T) {
	clk := clock.NewFake()
	m, reader := newMetrics(t, resilienceotel.WithClock(clk))
	l := resilienceotel.Measure[int](m, "db", 3)
	p := resilience.Then(l.Call, retry.New[int](retry.WithAttempts(5), retry.WithBackoff(backoff.Constant(0))), l.Attempt)
	n := 0
	_, err := p.Do(context.Background(), func(context.Context) (int, error) {
		n++
		clk.Advance(time.Duration(n) * 10 * time.Millisecond) // 10ms, 20ms, ... 50ms
		if n < 5 {
			return 0, downError{}
		}
		return n, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, reader)
	db := pname("db")
	assertData(t, got, "resilience.attempt.duration", histogram(
		hpt([]float64{0.01}, db, outcome("failure"), attempt(1), errtype(downType)),
		hpt([]float64{0.02}, db, outcome("failure"), attempt(2), errtype(downType)),
		hpt([]float64{0.03, 0.04}, db, outcome("failure"), attempt(3), errtype(downType)),
		hpt([]float64{0.05}, db, outcome("success"), attempt(3)),
	))
	assertData(t, got, "resilience.call.duration", histogram(hpt([]float64{0.15}, db, outcome("success"))))
}

// TestMeasureOutcomes: a call whose caller gave up is ignored, whatever
// its error; an attempt layer without its call layer has no attempt
// number; two Measures nested count their own attempts.
func TestMeasureOutcomes(t *testing.T) {
	m, reader := newMetrics(t, resilienceotel.WithClock(clock.NewFake()))
	outer := resilienceotel.Measure[int](m, "outer", 5)
	inner := resilienceotel.Measure[int](m, "inner", 5)
	lone := resilienceotel.Measure[int](m, "lone", 5)
	p := resilience.Then(outer.Call, retry.New[int](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0))),
		outer.Attempt, inner.Call, inner.Attempt, lone.Attempt)
	if got := p.String(); !strings.Contains(got, "measure(outer) > retry > measure-attempt(outer) > measure(inner)") {
		t.Errorf("chain %q", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, _ = p.Do(ctx, func(context.Context) (int, error) {
		cancel() // the caller gives up during the first attempt
		return 0, downError{}
	})
	got := collect(t, reader)
	ign := outcome("ignored")
	assertData(t, got, "resilience.attempt.duration", histogram(
		hpt([]float64{0}, pname("outer"), ign, attempt(1), errtype(downType)),
		hpt([]float64{0}, pname("inner"), ign, attempt(1), errtype(downType)),
		hpt([]float64{0}, pname("lone"), ign, errtype(downType)),
	))
	assertData(t, got, "resilience.calls", counter(
		pt[int64](1, ptype("pipeline"), pname("outer"), ign, errtype(downType)), // the retry.Error of its last attempt
		pt[int64](1, ptype("pipeline"), pname("inner"), ign, errtype(downType)),
	))
}

// TestMeasurePanics: Measure panics on its invalid arguments, naming them.
func TestMeasurePanics(t *testing.T) {
	m, _ := newMetrics(t)
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"nil", func() { resilienceotel.Measure[int](nil, "x", 1) }, "resilienceotel: Measure metrics must not be nil"},
		{"name", func() { resilienceotel.Measure[int](m, "", 1) }, "resilienceotel: Measure name must not be empty"},
		{"attempts", func() { resilienceotel.Measure[int](m, "x", 0) }, "resilienceotel: Measure attempts must be >= 1, got 0"},
	} {
		t.Run(c.name, func(t *testing.T) { expectPanic(t, c.want, c.f) })
	}
}

func expectPanic(t *testing.T, want string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if r := recover(); r != want {
			t.Errorf("panic %v, want %q", r, want)
		}
	}()
	f()
}
