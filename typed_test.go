package resilience_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
)

// counting returns a pass-through policy that counts the calls it sees.
func counting[T any](name string, n *int) resilience.Policy[T] {
	return resilience.New(name, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		*n++
		return next.Call(ctx)
	})
}

func TestGuardKeepsTheShapeAndRunsThePolicy(t *testing.T) {
	calls := 0
	p := counting[string]("count", &calls)
	greet := resilience.Guard(p, func(ctx context.Context, name string) (string, error) {
		return "hello " + name, nil
	})
	got, err := greet(context.Background(), "ada")
	if got != "hello ada" || err != nil || calls != 1 {
		t.Fatalf("greet = %q, %v (policy calls %d); want %q, nil, 1", got, err, calls, "hello ada")
	}

	add := resilience.Guard2(counting[int]("count", &calls), func(ctx context.Context, a, b int) (int, error) {
		return a + b, nil
	})
	sum, err := add(context.Background(), 2, 3)
	if sum != 5 || err != nil || calls != 2 {
		t.Fatalf("add = %d, %v (policy calls %d); want 5, nil, 2", sum, err, calls)
	}
}

func TestGuardErr(t *testing.T) {
	errWrite := errors.New("write failed")
	calls := 0
	for name, tc := range map[string]struct {
		p       resilience.Policy[struct{}]
		fnErr   error
		wantErr error
	}{
		"success":          {p: counting[struct{}]("c", &calls)},
		"error passes":     {p: counting[struct{}]("c", &calls), fnErr: errWrite, wantErr: errWrite},
		"fallback absorbs": {p: counting[struct{}]("c", &calls).Fallback(func(context.Context, error) (struct{}, error) { return struct{}{}, nil }), fnErr: errWrite},
	} {
		calls = 0
		write := resilience.GuardErr(tc.p, func(context.Context) error { return tc.fnErr })
		if err := write(context.Background()); err != tc.wantErr {
			t.Errorf("%s: err = %v, want %v", name, err, tc.wantErr)
		}
		if calls != 1 {
			t.Errorf("%s: policy saw %d calls, want 1", name, calls)
		}
	}

	// Any Policy[T] works, e.g. a shared Policy[any].
	anyCalls := 0
	write := resilience.GuardErr(counting[any]("shared", &anyCalls), func(context.Context) error { return errWrite })
	if err := write(context.Background()); err != errWrite || anyCalls != 1 {
		t.Errorf("through Policy[any]: err = %v, calls = %d", err, anyCalls)
	}
}

type invoice struct{ ID string }

func TestAsRunsTypedOpsThroughOneSharedPolicy(t *testing.T) {
	calls := 0
	shared := counting[any]("shared", &calls)
	inv, err := resilience.As[*invoice](shared).Do(context.Background(), func(context.Context) (*invoice, error) {
		return &invoice{ID: "A-1"}, nil
	})
	if err != nil || inv == nil || inv.ID != "A-1" {
		t.Fatalf("As[*invoice] = %v, %v", inv, err)
	}
	n, err := resilience.As[int](shared).Do(context.Background(), func(context.Context) (int, error) { return 42, nil })
	if n != 42 || err != nil {
		t.Fatalf("As[int] = %d, %v", n, err)
	}
	if calls != 2 {
		t.Errorf("shared policy saw %d calls, want 2 (one per typed call)", calls)
	}
	if got := resilience.As[int](shared).String(); got != "shared" {
		t.Errorf("String() = %q, want %q", got, "shared")
	}

	// Errors and nil results come through unchanged.
	errDep := errors.New("down")
	p, err := resilience.As[*invoice](shared).Do(context.Background(), func(context.Context) (*invoice, error) { return nil, errDep })
	if p != nil || err != errDep {
		t.Errorf("error case = %v, %v; want nil, %v", p, err, errDep)
	}
}

func TestAsReportsAFallbackOfTheWrongType(t *testing.T) {
	errDep := errors.New("down")
	shared := resilience.Policy[any]{}.Fallback(func(context.Context, error) (any, error) { return "cached", nil })
	n, err := resilience.As[int](shared).Do(context.Background(), func(context.Context) (int, error) { return 0, errDep })
	if n != 0 || err == nil || !strings.Contains(err.Error(), "resilience: As[int]: policy returned a string") {
		t.Errorf("As[int] with a string fallback = %d, %v; want 0 and a type error", n, err)
	}

	failing := resilience.Policy[any]{}.Fallback(func(_ context.Context, err error) (any, error) { return "partial", err })
	_, err = resilience.As[int](failing).Do(context.Background(), func(context.Context) (int, error) { return 0, errDep })
	if !errors.Is(err, errDep) {
		t.Errorf("type error does not wrap the policy's error: %v", err)
	}

	// A fallback of the right type is the result.
	right := resilience.Policy[any]{}.Fallback(func(context.Context, error) (any, error) { return 7, nil })
	n, err = resilience.As[int](right).Do(context.Background(), func(context.Context) (int, error) { return 0, errDep })
	if n != 7 || err != nil {
		t.Errorf("As[int] with an int fallback = %d, %v; want 7, nil", n, err)
	}
}

func TestAsComposesWithTypedPolicies(t *testing.T) {
	var trace []string
	shared := resilience.New("shared", func(ctx context.Context, next resilience.Next[any]) (any, error) {
		trace = append(trace, "shared")
		return next.Call(ctx)
	})
	p := tracer("outer", &trace).Then(resilience.As[int](shared), tracer("inner", &trace))
	if _, err := p.Do(context.Background(), okOp); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"outer>", "shared", "inner>", "<inner", "<outer"}, trace); diff != "" {
		t.Errorf("trace mismatch (-want +got):\n%s", diff)
	}
}

func TestTypedConstructorsPanicOnNil(t *testing.T) {
	var p resilience.Policy[int]
	for name, f := range map[string]func(){
		"resilience: Guard fn must not be nil":    func() { resilience.Guard[string](p, nil) },
		"resilience: Guard2 fn must not be nil":   func() { resilience.Guard2[string, string](p, nil) },
		"resilience: GuardErr fn must not be nil": func() { resilience.GuardErr(p, nil) },
	} {
		if got := panicMessage(f); got != name {
			t.Errorf("panic = %q, want %q", got, name)
		}
	}
}

func BenchmarkGuard(b *testing.B) {
	get := resilience.Guard(resilience.Then(passThrough("a"), passThrough("b")),
		func(ctx context.Context, id int) (int, error) { return id, nil })
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = get(ctx, 1)
	}
}

func TestAsOfZeroIsZero(t *testing.T) {
	var trace []string
	p := resilience.As[int](resilience.Policy[any]{}).Then(tracer("a", &trace))
	if got := p.String(); got != "a" {
		t.Errorf("As(zero).Then(a).String() = %q, want %q", got, "a")
	}
}
