package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// tracer returns a pass-through policy that appends "name>" before and
// "<name" after the rest of the chain to *trace.
func tracer(name string, trace *[]string) resilience.Policy[int] {
	return resilience.New(name, func(ctx context.Context, next resilience.Next[int]) (int, error) {
		*trace = append(*trace, name+">")
		v, err := next.Call(ctx)
		*trace = append(*trace, "<"+name)
		return v, err
	})
}

func TestThenOrderOutermostFirst(t *testing.T) {
	var trace []string
	a, b, c := tracer("a", &trace), tracer("b", &trace), tracer("c", &trace)
	op := func(context.Context) (int, error) {
		trace = append(trace, "op")
		return 7, nil
	}
	want := []string{"a>", "b>", "c>", "op", "<c", "<b", "<a"}
	for name, p := range map[string]resilience.Policy[int]{
		"method":     a.Then(b, c),
		"function":   resilience.Then(a, b, c),
		"nested":     a.Then(b.Then(c)),
		"left first": a.Then(b).Then(c),
	} {
		trace = nil
		v, err := p.Do(context.Background(), op)
		if v != 7 || err != nil {
			t.Errorf("%s: Do = %d, %v; want 7, nil", name, v, err)
		}
		if diff := cmp.Diff(want, trace); diff != "" {
			t.Errorf("%s: trace mismatch (-want +got):\n%s", name, diff)
		}
	}
}

func TestZeroPolicyIsIdentity(t *testing.T) {
	var zero resilience.Policy[string]
	wantErr := errors.New("boom")
	op := func(context.Context) (string, error) { return "v", wantErr }
	v, err := zero.Do(context.Background(), op)
	if v != "v" || err != wantErr {
		t.Fatalf("zero.Do = %q, %v; want %q, %v", v, err, "v", wantErr)
	}
	if got := zero.String(); got != "identity" {
		t.Errorf("zero.String() = %q, want %q", got, "identity")
	}
	if got := resilience.Then[string]().String(); got != "identity" {
		t.Errorf("Then().String() = %q, want %q", got, "identity")
	}

	var trace []string
	a := tracer("a", &trace)
	for name, p := range map[string]resilience.Policy[int]{
		"zero.Then(a)":      resilience.Policy[int]{}.Then(a),
		"a.Then(zero)":      a.Then(resilience.Policy[int]{}),
		"Then(zero,a,zero)": resilience.Then(resilience.Policy[int]{}, a, resilience.Policy[int]{}),
	} {
		if got := p.String(); got != "a" {
			t.Errorf("%s.String() = %q, want %q", name, got, "a")
		}
		trace = nil
		if _, err := p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil }); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"a>", "<a"}, trace); diff != "" {
			t.Errorf("%s: trace mismatch (-want +got):\n%s", name, diff)
		}
	}
}

func TestThenDoesNotShareLayers(t *testing.T) {
	var trace []string
	a, b, c, d := tracer("a", &trace), tracer("b", &trace), tracer("c", &trace), tracer("d", &trace)
	ab := a.Then(b)
	abc := ab.Then(c)
	abd := ab.Then(d) // must not overwrite abc's third layer
	if got := abc.String(); got != "a > b > c" {
		t.Errorf("abc.String() = %q", got)
	}
	if got := abd.String(); got != "a > b > d" {
		t.Errorf("abd.String() = %q", got)
	}
	if got := ab.String(); got != "a > b" {
		t.Errorf("ab.String() = %q", got)
	}
}

func TestString(t *testing.T) {
	var trace []string
	p := resilience.Then(tracer("retry", &trace), tracer("breaker(payments)", &trace)).
		Fallback(func(context.Context, error) (int, error) { return 0, nil })
	if got, want := p.String(), "fallback > retry > breaker(payments)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got, want := fmt.Sprint(p), "fallback > retry > breaker(payments)"; got != want {
		t.Errorf("fmt.Sprint = %q, want %q", got, want)
	}
}

func TestFallback(t *testing.T) {
	errDep := errors.New("dependency down")
	errFB := errors.New("fallback failed too")
	tests := []struct {
		name      string
		opV       int
		opErr     error
		fbV       int
		fbErr     error
		wantCalls int
		wantV     int
		wantErr   error
	}{
		{name: "success skips fallback", opV: 1, wantCalls: 0, wantV: 1},
		{name: "error runs fallback", opErr: errDep, fbV: 42, wantCalls: 1, wantV: 42},
		{name: "fallback may return the error again", opErr: errDep, fbErr: errDep, wantCalls: 1, wantErr: errDep},
		{name: "fallback may return another error", opErr: errDep, fbV: 3, fbErr: errFB, wantCalls: 1, wantV: 3, wantErr: errFB},
		{name: "non-zero value with error still falls back", opV: 9, opErr: errDep, fbV: 5, wantCalls: 1, wantV: 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var seen error
			p := resilience.Policy[int]{}.Fallback(func(ctx context.Context, err error) (int, error) {
				calls++
				seen = err
				return tt.fbV, tt.fbErr
			})
			v, err := p.Do(context.Background(), func(context.Context) (int, error) { return tt.opV, tt.opErr })
			if calls != tt.wantCalls {
				t.Errorf("fallback calls = %d, want %d", calls, tt.wantCalls)
			}
			if calls > 0 && seen != tt.opErr {
				t.Errorf("fallback saw %v, want %v", seen, tt.opErr)
			}
			if v != tt.wantV || err != tt.wantErr {
				t.Errorf("Do = %d, %v; want %d, %v", v, err, tt.wantV, tt.wantErr)
			}
		})
	}
}

func TestFallbackIsOutsideItsPolicy(t *testing.T) {
	var trace []string
	refuse := resilience.New("guard", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		trace = append(trace, "refused")
		return 0, errors.New("guard: refused")
	})
	p := refuse.Fallback(func(ctx context.Context, err error) (int, error) {
		trace = append(trace, "fallback: "+err.Error())
		return -1, nil
	})
	v, err := p.Do(context.Background(), func(context.Context) (int, error) {
		trace = append(trace, "op")
		return 1, nil
	})
	if v != -1 || err != nil {
		t.Fatalf("Do = %d, %v; want -1, nil", v, err)
	}
	if diff := cmp.Diff([]string{"refused", "fallback: guard: refused"}, trace); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
}

// guardLayer models a guard: it takes a permit, records the outcome (a panic
// counts as a failure) and releases the permit on every path.
type guardLayer struct {
	held, failures, successes int
}

func (g *guardLayer) policy() resilience.Policy[int] {
	return resilience.New("guard", func(ctx context.Context, next resilience.Next[int]) (v int, err error) {
		g.held++
		ok := false
		defer func() {
			g.held--
			if ok {
				g.successes++
			} else {
				g.failures++
			}
		}()
		v, err = next.Call(ctx)
		ok = err == nil
		return v, err
	})
}

func TestPanicPropagatesAfterGuardsRecordIt(t *testing.T) {
	outer, inner := &guardLayer{}, &guardLayer{}
	fallbackCalled := false
	p := outer.policy().Then(inner.policy()).Fallback(func(context.Context, error) (int, error) {
		fallbackCalled = true
		return 0, nil
	})
	type panicValue struct{ msg string }
	want := &panicValue{"op exploded"}
	got := func() (r any) {
		defer func() { r = recover() }()
		_, _ = p.Do(context.Background(), func(context.Context) (int, error) { panic(want) })
		return nil
	}()
	if got != want {
		t.Fatalf("recovered %v (%T), want the op's own panic value %v", got, got, want)
	}
	if fallbackCalled {
		t.Error("fallback ran on a panic")
	}
	for name, g := range map[string]*guardLayer{"outer": outer, "inner": inner} {
		if diff := cmp.Diff(guardLayer{failures: 1}, *g, cmp.AllowUnexported(guardLayer{})); diff != "" {
			t.Errorf("%s guard mismatch (-want +got):\n%s", name, diff)
		}
	}
}

type ctxKey struct{}

func TestContextReachesEveryLayerAndTheOp(t *testing.T) {
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "caller"))
	defer cancel()
	var seen []any
	layer := func(name string) resilience.Policy[int] {
		return resilience.New(name, func(ctx context.Context, next resilience.Next[int]) (int, error) {
			seen = append(seen, ctx.Value(ctxKey{}))
			return next.Call(ctx)
		})
	}
	p := layer("a").Then(layer("b"))
	_, _ = p.Do(ctx, func(opCtx context.Context) (int, error) {
		seen = append(seen, opCtx.Value(ctxKey{}))
		if opCtx != ctx {
			t.Error("the op did not get the caller's own context through pass-through layers")
		}
		return 0, nil
	})
	if diff := cmp.Diff([]any{"caller", "caller", "caller"}, seen); diff != "" {
		t.Errorf("context values mismatch (-want +got):\n%s", diff)
	}

	// A caller's cancellation reaches the op as the caller's own error, and a
	// fallback sees that error (it decides whether to act on it).
	cancel()
	var fbErr error
	_, err := p.Fallback(func(ctx context.Context, err error) (int, error) {
		fbErr = err
		return 0, err
	}).Do(ctx, func(ctx context.Context) (int, error) { return 0, ctx.Err() })
	if !errors.Is(err, context.Canceled) || !errors.Is(fbErr, context.Canceled) {
		t.Errorf("Do err = %v, fallback saw %v; want context.Canceled for both", err, fbErr)
	}
}

func TestWrapComposesOnceAndMatchesDo(t *testing.T) {
	var trace []string
	p := tracer("a", &trace).Then(tracer("b", &trace))
	n := 0
	op := p.Wrap(func(context.Context) (int, error) { n++; return n, nil })
	for want := 1; want <= 3; want++ {
		trace = nil
		v, err := op(context.Background())
		if v != want || err != nil {
			t.Fatalf("call %d = %d, %v", want, v, err)
		}
		if diff := cmp.Diff([]string{"a>", "b>", "<b", "<a"}, trace); diff != "" {
			t.Errorf("call %d trace mismatch (-want +got):\n%s", want, diff)
		}
	}
}

func TestNextCallableManyTimes(t *testing.T) {
	// A retry-like layer calls next more than once; each call runs the rest of
	// the chain afresh.
	var trace []string
	twice := resilience.New("twice", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		a, _ := next.Call(ctx)
		b, err := next.Call(ctx)
		return a + b, err
	})
	n := 0
	v, err := twice.Then(tracer("inner", &trace)).Do(context.Background(), func(context.Context) (int, error) {
		n++
		return n, nil
	})
	if v != 3 || err != nil {
		t.Fatalf("Do = %d, %v; want 3, nil", v, err)
	}
	if diff := cmp.Diff([]string{"inner>", "<inner", "inner>", "<inner"}, trace); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
}

func TestConstructionPanics(t *testing.T) {
	noop := func(ctx context.Context, next resilience.Next[int]) (int, error) { return next.Call(ctx) }
	tests := []struct {
		name string
		f    func()
		want string
	}{
		{"New empty name", func() { resilience.New("", noop) }, "resilience: New name must not be empty"},
		{"New nil run", func() { resilience.New[int]("x", nil) }, "resilience: New run must not be nil (policy x)"},
		{"Fallback nil", func() { resilience.Policy[int]{}.Fallback(nil) }, "resilience: Fallback fn must not be nil"},
		{"Do nil op", func() { _, _ = resilience.Policy[int]{}.Do(context.Background(), nil) }, "resilience: Do op must not be nil"},
		{"Wrap nil op", func() { resilience.Policy[int]{}.Wrap(nil) }, "resilience: Wrap op must not be nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := panicMessage(tt.f)
			if got != tt.want {
				t.Errorf("panic = %q, want %q", got, tt.want)
			}
		})
	}
}

func panicMessage(f func()) (msg string) {
	defer func() {
		r := recover()
		if r == nil {
			msg = "<no panic>"
			return
		}
		msg = fmt.Sprint(r)
	}()
	f()
	return "<no panic>"
}

// passThrough is a layer that does what a built-in policy does on its happy
// path: a little work, then the rest of the chain.
func passThrough(name string) resilience.Policy[int] {
	return resilience.New(name, func(ctx context.Context, next resilience.Next[int]) (int, error) {
		v, err := next.Call(ctx)
		if err != nil {
			return 0, err
		}
		return v, nil
	})
}

func okOp(context.Context) (int, error) { return 1, nil }

func TestNoAllocationsOfItsOwn(t *testing.T) {
	three := resilience.Then(passThrough("a"), passThrough("b"), passThrough("c"))
	wrapped := three.Wrap(okOp)
	withFallback := three.Fallback(func(context.Context, error) (int, error) { return 0, nil })
	ctx := context.Background()
	for name, f := range map[string]func(){
		"Do identity": func() { _, _ = resilience.Policy[int]{}.Do(ctx, okOp) },
		"Do three":    func() { _, _ = three.Do(ctx, okOp) },
		"Wrap three":  func() { _, _ = wrapped(ctx) },
		"Do fallback": func() { _, _ = withFallback.Do(ctx, okOp) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs per call, want 0", name, n)
		}
	}
}

func BenchmarkDoIdentity(b *testing.B) {
	var p resilience.Policy[int]
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Do(ctx, okOp)
	}
}

func BenchmarkDoThreeLayers(b *testing.B) {
	p := resilience.Then(passThrough("a"), passThrough("b"), passThrough("c"))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = p.Do(ctx, okOp)
	}
}

func BenchmarkWrapThreeLayers(b *testing.B) {
	op := resilience.Then(passThrough("a"), passThrough("b"), passThrough("c")).Wrap(okOp)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = op(ctx)
	}
}

func BenchmarkDoThreeLayersParallel(b *testing.B) {
	p := resilience.Then(passThrough("a"), passThrough("b"), passThrough("c"))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			_, _ = p.Do(ctx, okOp)
		}
	})
}

func TestFallbackFunctionFormMatchesMethod(t *testing.T) {
	var trace []string
	fb := func(_ context.Context, err error) (int, error) {
		trace = append(trace, "fallback: "+err.Error())
		return -1, nil
	}
	failing := func(context.Context) (int, error) { return 0, errors.New("down") }
	inner := tracer("inner", &trace)
	var got [][]string
	for _, p := range []resilience.Policy[int]{inner.Fallback(fb), resilience.Fallback(fb).Then(inner)} {
		trace = nil
		if v, err := p.Do(context.Background(), failing); v != -1 || err != nil {
			t.Errorf("%v: Do = %d, %v; want -1, nil", p, v, err)
		}
		if p.String() != "fallback > inner" {
			t.Errorf("String() = %q", p.String())
		}
		got = append(got, trace)
	}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("function form differs from method (-method +function):\n%s", diff)
	}
}

// Regression: p.Do(nil, op) and a zero Next's Call failed with a bare nil
// dereference, far from the mistake. Each panics with a message that says
// what was nil, whatever the chain.
func TestNilContextAndZeroNextPanicSayingWhat(t *testing.T) {
	op := func(ctx context.Context) (int, error) { return 1, ctx.Err() }
	const doNil = "resilience: Do called with a nil context (use context.Background())"
	const wrapNil = "resilience: a wrapped Op called with a nil context (use context.Background())"
	const zero = "resilience: Next.Call on a zero Next: a layer gets its Next from the chain (see New); the zero Next has no op"
	two := resilience.Then(passThrough("a"), passThrough("b"))
	var nilCtx context.Context
	for _, tt := range []struct {
		name, want string
		f          func()
	}{
		{"identity Do", doNil, func() { _, _ = resilience.Policy[int]{}.Do(nilCtx, op) }},
		{"chain Do", doNil, func() { _, _ = two.Do(nilCtx, op) }},
		{"identity Wrap", wrapNil, func() { _, _ = resilience.Policy[int]{}.Wrap(op)(nilCtx) }},
		{"chain Wrap", wrapNil, func() { _, _ = two.Wrap(op)(nilCtx) }},
		{"Guard", doNil, func() {
			_, _ = resilience.Guard(two, func(ctx context.Context, s string) (int, error) { return len(s), nil })(nilCtx, "x")
		}},
		{"zero Next", zero, func() { _, _ = resilience.Next[int]{}.Call(context.Background()) }},
		{"a layer's zero Next", zero, func() {
			p := resilience.New("bad", func(ctx context.Context, _ resilience.Next[int]) (int, error) {
				var n resilience.Next[int]
				return n.Call(ctx)
			})
			_, _ = p.Do(context.Background(), op)
		}},
	} {
		if got := panicMessage(tt.f); got != tt.want {
			t.Errorf("%s: panic = %q, want %q", tt.name, got, tt.want)
		}
	}
	// The checks cost no allocation.
	ctx := context.Background()
	wrapped := two.Wrap(op)
	if n := testing.AllocsPerRun(100, func() { _, _ = two.Do(ctx, op); _, _ = wrapped(ctx) }); n != 0 {
		t.Errorf("Do and a wrapped Op allocated %v times per call, want 0", n)
	}
}
