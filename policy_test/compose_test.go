package policytest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience"
)

// layerKind is what one generated layer does with the rest of the chain.
type layerKind int

const (
	kindPass    layerKind = iota // call next, return its result
	kindAdd                      // call next; on success add k
	kindWrapErr                  // call next; wrap a non-nil error
	kindShort                    // return (k, nil) or (0, errShort) without calling next
	kindTwice                    // call next twice, return the second result
	kindRecover                  // turn an error into (k, nil)
	numLayerKinds
)

type layerSpec struct {
	Kind  layerKind
	K     int
	Fails bool // for kindShort
}

// opSpec is what the op does.
type opSpec struct {
	V     int
	Fails bool
	Panic bool
}

var errOp = errors.New("op failed")
var errShort = errors.New("short-circuited")

type panicValue struct{ id int }

// outcome is everything observable about one run.
type outcome struct {
	V        int
	Err      string
	Panicked any
	Trace    []string
}

// recorder is where generated layers and ops write their trace.
type recorder struct{ trace []string }

func (r *recorder) add(format string, args ...any) {
	r.trace = append(r.trace, fmt.Sprintf(format, args...))
}

// policyOf builds the library policy of one layer spec.
func policyOf(id int, s layerSpec, r *recorder) resilience.Policy[int] {
	name := fmt.Sprintf("L%d", id)
	return resilience.New(name, func(ctx context.Context, next resilience.Next[int]) (v int, err error) {
		r.add("%s>", name)
		defer func() {
			if p := recover(); p != nil {
				r.add("%s saw panic", name)
				panic(p)
			}
			r.add("<%s", name)
		}()
		return apply(s, name, func() (int, error) { return next.Call(ctx) })
	})
}

// apply is the meaning of a layer, shared by the library layer above and the
// model below: given "the rest of the chain" as a plain function.
func apply(s layerSpec, name string, next func() (int, error)) (int, error) {
	switch s.Kind {
	case kindPass:
		return next()
	case kindAdd:
		v, err := next()
		if err == nil {
			v += s.K
		}
		return v, err
	case kindWrapErr:
		v, err := next()
		if err != nil {
			err = fmt.Errorf("%s: %w", name, err)
		}
		return v, err
	case kindShort:
		if s.Fails {
			return 0, errShort
		}
		return s.K, nil
	case kindTwice:
		_, _ = next()
		return next()
	case kindRecover:
		v, err := next()
		if err != nil {
			return s.K, nil
		}
		return v, nil
	}
	panic("unknown layer kind")
}

// opOf returns the op of o, recording each run in r. A panicking op panics
// with the same pointer on every run, so two runs' panics compare equal.
func opOf(o opSpec, r *recorder) resilience.Op[int] {
	pv := &panicValue{o.V}
	return func(context.Context) (int, error) {
		r.add("op")
		if o.Panic {
			panic(pv)
		}
		if o.Fails {
			return 0, errOp
		}
		return o.V, nil
	}
}

func observe(r *recorder, run func() (int, error)) (out outcome) {
	r.trace = nil
	defer func() {
		out.Panicked = recover()
		out.Trace = r.trace
	}()
	v, err := run()
	out.V = v
	if err != nil {
		out.Err = err.Error()
	}
	return out
}

var outcomeCmp = cmp.Comparer(func(a, b *panicValue) bool { return a == b })

func genSpecs(t *rapid.T) []layerSpec {
	return rapid.SliceOfN(rapid.Custom(func(t *rapid.T) layerSpec {
		return layerSpec{
			Kind:  layerKind(rapid.IntRange(0, int(numLayerKinds)-1).Draw(t, "kind")),
			K:     rapid.IntRange(-5, 5).Draw(t, "k"),
			Fails: rapid.Bool().Draw(t, "fails"),
		}
	}), 0, 7).Draw(t, "layers")
}

func genOp(t *rapid.T) opSpec {
	return opSpec{
		V:     rapid.IntRange(-100, 100).Draw(t, "v"),
		Fails: rapid.Bool().Draw(t, "opFails"),
		Panic: rapid.IntRange(0, 4).Draw(t, "opPanics") == 0,
	}
}

// build returns the policies of specs[i] numbered from first.
func build(specs []layerSpec, first int, r *recorder) []resilience.Policy[int] {
	ps := make([]resilience.Policy[int], len(specs))
	for i, s := range specs {
		ps[i] = policyOf(first+i, s, r)
	}
	return ps
}

func TestComposeMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs, o := genSpecs(t), genOp(t)
		r := &recorder{}
		opFn := opOf(o, r)
		want := observe(r, func() (int, error) {
			return modelWith(specs, r, func() (int, error) { return opFn(context.Background()) })
		})
		got := observe(r, func() (int, error) {
			return resilience.Then(build(specs, 0, r)...).Do(context.Background(), opFn)
		})
		if diff := cmp.Diff(want, got, outcomeCmp); diff != "" {
			t.Fatalf("chain vs model mismatch (-want +got):\n%s", diff)
		}
	})
}

// modelWith is model with an arbitrary op.
func modelWith(specs []layerSpec, r *recorder, op func() (int, error)) (int, error) {
	var rec func(i int) (int, error)
	rec = func(i int) (int, error) {
		if i == len(specs) {
			return op()
		}
		name := fmt.Sprintf("L%d", i)
		r.add("%s>", name)
		defer func() {
			if p := recover(); p != nil {
				r.add("%s saw panic", name)
				panic(p)
			}
			r.add("<%s", name)
		}()
		return apply(specs[i], name, func() (int, error) { return rec(i + 1) })
	}
	return rec(0)
}

func TestComposeLaws(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs, o := genSpecs(t), genOp(t)
		r := &recorder{}
		op := opOf(o, r)
		layers := build(specs, 0, r)
		i := rapid.IntRange(0, len(layers)).Draw(t, "split1")
		j := rapid.IntRange(i, len(layers)).Draw(t, "split2")
		a := resilience.Then(layers[:i]...)
		b := resilience.Then(layers[i:j]...)
		c := resilience.Then(layers[j:]...)
		var zero resilience.Policy[int]

		reference := resilience.Then(layers...)
		want := observe(r, func() (int, error) { return reference.Do(context.Background(), op) })
		for name, p := range map[string]resilience.Policy[int]{
			"zero.Then(p)":        zero.Then(reference),
			"p.Then(zero)":        reference.Then(zero),
			"Then(zero, p, zero)": resilience.Then(zero, reference, zero),
			"(a.b).c":             a.Then(b).Then(c),
			"a.(b.c)":             a.Then(b.Then(c)),
			"a.Then(b, c)":        a.Then(b, c),
			"Then(Then(a,b),c)":   resilience.Then(resilience.Then(a, b), c),
		} {
			got := observe(r, func() (int, error) { return p.Do(context.Background(), op) })
			if diff := cmp.Diff(want, got, outcomeCmp); diff != "" {
				t.Fatalf("%s differs from the flat chain (-want +got):\n%s", name, diff)
			}
			if p.String() != reference.String() {
				t.Fatalf("%s.String() = %q, want %q", name, p.String(), reference.String())
			}
			wrapped := p.Wrap(op)
			got = observe(r, func() (int, error) { return wrapped(context.Background()) })
			if diff := cmp.Diff(want, got, outcomeCmp); diff != "" {
				t.Fatalf("%s.Wrap differs from Do (-want +got):\n%s", name, diff)
			}
		}
	})
}

func TestFallbackCalledIffError(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		specs, o := genSpecs(t), genOp(t)
		fbV := rapid.IntRange(-100, 100).Draw(t, "fallbackValue")
		fbFails := rapid.Bool().Draw(t, "fallbackFails")
		r := &recorder{}
		op := opOf(o, r)
		p := resilience.Then(build(specs, 0, r)...)
		plain := observe(r, func() (int, error) { return p.Do(context.Background(), op) })

		var seen []string
		errFB := errors.New("fallback failed")
		withFB := p.Fallback(func(_ context.Context, err error) (int, error) {
			seen = append(seen, err.Error())
			if fbFails {
				return fbV, fmt.Errorf("%w after %w", errFB, err)
			}
			return fbV, nil
		})
		got := observe(r, func() (int, error) { return withFB.Do(context.Background(), op) })

		want := plain
		var wantSeen []string
		if plain.Panicked == nil && plain.Err != "" {
			wantSeen = []string{plain.Err}
			want.V, want.Err = fbV, ""
			if fbFails {
				want.Err = errFB.Error() + " after " + plain.Err
			}
		}
		if diff := cmp.Diff(wantSeen, seen); diff != "" {
			t.Fatalf("fallback calls mismatch (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff(want, got, outcomeCmp); diff != "" {
			t.Fatalf("outcome with fallback mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestPanicPropagatesThroughEveryLayer(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Only layers that reach the op: no short-circuits.
		specs := genSpecs(t)
		for i := range specs {
			if specs[i].Kind == kindShort {
				specs[i].Kind = kindPass
			}
		}
		r := &recorder{}
		pv := &panicValue{1}
		p := resilience.Then(build(specs, 0, r)...).Fallback(func(context.Context, error) (int, error) {
			t.Fatal("fallback called on a panic")
			return 0, nil
		})
		got := observe(r, func() (int, error) {
			return p.Do(context.Background(), func(context.Context) (int, error) { panic(pv) })
		})
		if got.Panicked != pv {
			t.Fatalf("panic value = %v, want the op's own %p", got.Panicked, pv)
		}
		// Every layer saw the panic on its way out, innermost first.
		var want []string
		for i := len(specs) - 1; i >= 0; i-- {
			want = append(want, fmt.Sprintf("L%d saw panic", i))
		}
		var saw []string
		for _, line := range got.Trace {
			if len(line) > 9 && line[len(line)-9:] == "saw panic" {
				saw = append(saw, line)
			}
		}
		if diff := cmp.Diff(want, saw); diff != "" {
			t.Fatalf("layers that saw the panic mismatch (-want +got):\n%s", diff)
		}
	})
}
