package resilience_test

import (
	"testing"

	"github.com/f0b5b96b/resilience"
)

// The function form of Fallback, like the method, refuses a nil function
// when the policy is made, not when a call first fails.
func TestFallbackFunctionPanicsOnNilFn(t *testing.T) {
	if got, want := panicMessage(func() { resilience.Fallback[int](nil) }), "resilience: Fallback fn must not be nil"; got != want {
		t.Errorf("Fallback(nil) panic = %q, want %q", got, want)
	}
}

// WithFallbackName refuses a name that is not valid UTF-8, naming itself,
// as every option that names a policy does.
func TestWithFallbackNameRejectsInvalidUTF8(t *testing.T) {
	if got, want := panicMessage(func() { resilience.WithFallbackName("db\xff") }), `resilience: WithFallbackName("db\xff"): name must be valid UTF-8`; got != want {
		t.Errorf("WithFallbackName(%q) panic = %q, want %q", "db\xff", got, want)
	}
}
