package apishape_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/apishape"
)

// The checker finds each break of each rule in testdata/bad, and nothing
// else: a check that cannot fail would let the shape drift.
func TestCheckFindsEachBreak(t *testing.T) {
	got, err := apishape.Check(apishape.Rules{
		Dir:    "testdata/bad",
		Guards: map[string][]string{"guard": {"Guard", "Keyed"}, "gone": {"X"}},
		Exempt: map[string]string{"guard.Unused": "a reason", "guard.WithObserver": " "},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"exemption guard.Unused exempts nothing: remove it",
		"exemption guard.WithObserver exempts nothing: remove it",
		"exemption guard.WithObserver has no reason",
		"gone: listed in Guards, but no such package",
		"guard.AliasOption: an Option is a sealed interface (interface{ apply(*config) }), not an alias of a func type",
		"guard.FooPolicy: a guard's policy adapter is Policy (the primary guard's) or <Guard>Policy for a guard type of the package",
		"guard.Guard.Rejected: a lifetime refusal counter is called Refused",
		"guard.Guard: a guard needs a method Name() string",
		"guard.Hidden: has Snapshot() telemetry.Snapshot but is not listed as a guard",
		"guard.Keyed: a guard needs a method Name() string",
		"guard.LeakyOption: an Option is a sealed interface (interface{ apply(*config) }), not an interface with an exported method, or one embedded from elsewhere",
		"guard.OpenOption: an Option is a sealed interface (interface{ apply(*config) }), not an interface with an exported method, or one embedded from elsewhere",
		"guard.Option: an Option is a sealed interface (interface{ apply(*config) }), not a func type",
		"guard.Stats.Shed: a lifetime refusal counter is called Refused",
		"guard.Stats: a guard's Stats counts its refusals in a field Refused",
		"guard.WithLimits: an option sets one field, this one sets max, min",
		"guard: a guard's package needs the option WithClock",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems mismatch (-want +got):\n%s", diff)
	}
}
