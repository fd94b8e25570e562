package resiliencetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrInjected is the error of a call that a fault made fail: [Fail] with a
// nil error, [FailRate], [RetryAfter]. Errors of RetryAfter match it
// through errors.Is.
var ErrInjected = errors.New("resiliencetest: injected failure")

// Fault is what a fake dependency does with one call: succeed, fail, wait,
// hang or panic. [Fault.Inject] runs it; a [Dependency] runs its fault for
// each call it gets.
//
// The zero Fault is [Healthy]: every call succeeds at once. A Fault is a
// small value, safe to copy and to use from many goroutines at once; the
// faults that keep state (the random source of [FailRate], the call count of
// [Sequence]) share it between copies. It prints as a short description,
// such as "fail-rate(0.3, seed 1)", also under %#v, so that the faults a
// rapid property drew read well in its failure report.
type Fault struct {
	name   string
	inject func(ctx context.Context) error
}

// Inject runs f for one call under ctx: it returns nil for a call that
// succeeds, or the call's error. It may block (a delay, a hang) and may
// panic, as f says.
func (f Fault) Inject(ctx context.Context) error {
	if f.inject == nil {
		return nil
	}
	return f.inject(ctx)
}

// String describes f, for example "healthy", "fail", "hang" or
// "timeline(0s healthy, 10s fail)".
func (f Fault) String() string {
	if f.name == "" {
		return "healthy"
	}
	return f.name
}

// GoString is String, so that %#v (which rapid uses to log draws) reads the
// same.
func (f Fault) GoString() string { return f.String() }

// Healthy returns the fault of a healthy dependency: every call succeeds at
// once. It is the zero Fault.
func Healthy() Fault { return Fault{} }

// Fail returns a fault that fails every call with err, at once; a nil err
// means [ErrInjected].
func Fail(err error) Fault {
	if err == nil {
		err = ErrInjected
	}
	name := "fail"
	if err != ErrInjected {
		name = "fail(" + strconv.Quote(err.Error()) + ")"
	}
	return Fault{name: name, inject: func(context.Context) error { return err }}
}

// FailRate returns a fault that fails a share rate of the calls, in [0, 1],
// with [ErrInjected], at once, and lets the others succeed. Which calls fail
// is drawn from a random source seeded with seed: calls made one after the
// other fail the same way in every run with the same seed (calls made at
// once draw in the order they take the source's lock). Rate 0 fails no call
// and rate 1 every call, without drawing. FailRate panics if rate is not in
// [0, 1].
func FailRate(rate float64, seed uint64) Fault {
	if !(rate >= 0 && rate <= 1) {
		panic(fmt.Sprintf("resiliencetest: FailRate rate must be in [0, 1], got %v", rate))
	}
	name := "fail-rate(" + strconv.FormatFloat(rate, 'g', -1, 64) + ", seed " + strconv.FormatUint(seed, 10) + ")"
	src := newSource(seed)
	return Fault{name: name, inject: func(context.Context) error {
		if rate == 0 || (rate < 1 && src.float64() >= rate) {
			return nil
		}
		return ErrInjected
	}}
}

// RetryAfter returns a fault that fails every call, at once, with an error
// that matches [ErrInjected] and asks to be retried after d:
// resilience.RetryAfter of the error reports d, as for an HTTP 429 or 503
// with a Retry-After header (resilience.Never: never). Every call gets the
// same error value, so a call allocates nothing. RetryAfter panics if d < 0.
func RetryAfter(d time.Duration) Fault {
	if d < 0 {
		panic(fmt.Sprintf("resiliencetest: RetryAfter hint must be >= 0, got %v", d))
	}
	err := &hintError{d: d}
	return Fault{name: "retry-after(" + d.String() + ")", inject: func(context.Context) error { return err }}
}

// hintError is the error of a RetryAfter fault.
type hintError struct{ d time.Duration }

func (e *hintError) Error() string {
	if e.d == math.MaxInt64 {
		return ErrInjected.Error() + ", retry never"
	}
	return ErrInjected.Error() + ", retry after " + e.d.String()
}

// RetryAfter returns the hint, which resilience.RetryAfter finds.
func (e *hintError) RetryAfter() time.Duration { return e.d }

// Unwrap returns ErrInjected.
func (e *hintError) Unwrap() error { return ErrInjected }

// Hang returns a fault that blocks each call until its context is done and
// then fails it with the context's error, as a dependency that never answers
// does. A call whose context is never done hangs for good: put a timeout in
// the pipeline under test (or give the call a deadline).
func Hang() Fault {
	return Fault{name: "hang", inject: func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}}
}

// Panic returns a fault that panics with v in every call (a nil v panics
// with a *runtime.PanicNilError, as panic(nil) does).
func Panic(v any) Fault {
	return Fault{name: fmt.Sprintf("panic(%v)", v), inject: func(context.Context) error { panic(v) }}
}

// Chain returns a fault that runs faults one after the other in each call
// and stops at the first that fails (or panics), with its error: for
// example Chain(Delay(clk, Fixed(time.Second)), FailRate(0.5, 1)) is a slow
// dependency that fails half of the calls, after the delay. Chain() is
// Healthy.
func Chain(faults ...Fault) Fault {
	faults = append([]Fault(nil), faults...)
	switch len(faults) {
	case 0:
		return Fault{}
	case 1:
		return faults[0]
	}
	return Fault{name: "chain(" + names(faults) + ")", inject: func(ctx context.Context) error {
		for _, f := range faults {
			if err := f.Inject(ctx); err != nil {
				return err
			}
		}
		return nil
	}}
}

// names lists the faults' descriptions, separated by ", ".
func names(faults []Fault) string {
	s := make([]string, len(faults))
	for i, f := range faults {
		s[i] = f.String()
	}
	return strings.Join(s, ", ")
}

// source is a seeded random source safe for simultaneous use.
type source struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newSource(seed uint64) *source {
	return &source{r: rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))}
}

// float64 returns a number in [0, 1).
func (s *source) float64() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.r.Float64()
}

// Func returns a fault of your own: inject is run for each call, as
// [Fault.Inject] says (nil for a call that succeeds, or its error; it may
// block or panic), and the fault prints as name. Use it for a behaviour the
// kit lacks, or to watch the calls that reach a dependency:
//
//	probe := resiliencetest.Func("probe", func(context.Context) error {
//		if b.State() == breaker.Open {
//			t.Error("a call reached the dependency while the breaker was open")
//		}
//		return nil
//	})
//	dep := resiliencetest.NewDependency(1, resiliencetest.Chain(probe, outage))
//
// inject must be safe for simultaneous use if the fault is. Func panics if
// inject is nil.
func Func(name string, inject func(ctx context.Context) error) Fault {
	if inject == nil {
		panic("resiliencetest: Func inject must not be nil")
	}
	if name == "" {
		name = "func"
	}
	return Fault{name: name, inject: inject}
}
