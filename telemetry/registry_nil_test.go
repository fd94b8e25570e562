package telemetry_test

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience/telemetry"
)

// Register, Unregister and RegisterPipeline panic on a nil guard or
// pipeline with a message naming the method, not a nil dereference.
func TestRegistryNilPanicsSayWhat(t *testing.T) {
	r := telemetry.NewRegistry()
	for want, f := range map[string]func(){
		"telemetry: Register guard must not be nil":                       func() { _ = r.Register(nil) },
		"telemetry: Unregister guard must not be nil":                     func() { r.Unregister(nil) },
		"telemetry: RegisterPipeline pipeline must not be nil":            func() { _ = r.RegisterPipeline("p", nil) },
		"telemetry: AddObserver observer must not be nil":                 func() { r.AddObserver(nil) },
		"telemetry: AddObserver observer must not be the registry itself": func() { r.AddObserver(r) },
	} {
		got := func() (msg any) {
			defer func() { msg = recover() }()
			f()
			return nil
		}()
		if got != want {
			t.Errorf("panic = %v, want %q", got, want)
		}
	}
}

// The error of a guard registered without a name says which kind of
// guard it is, or "guard" for one whose snapshot has no kind.
func TestRegistryNoNameSaysTheKind(t *testing.T) {
	r := telemetry.NewRegistry()
	for _, tc := range []struct {
		g    telemetry.Guard
		want string
	}{
		{guard{telemetry.Snapshot{}}, "telemetry: registration needs a name: a guard without a Name"},
		{newBreaker(""), "telemetry: registration needs a name: a breaker without a Name"},
	} {
		if err := r.Register(tc.g); !errors.Is(err, telemetry.ErrNoName) || err.Error() != tc.want {
			t.Errorf("Register(%+v) = %v, want %q", tc.g.Snapshot(), err, tc.want)
		}
	}
}
