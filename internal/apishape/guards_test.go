package apishape_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/apishape"
)

// A guard listed but not declared, and one without Snapshot, are
// problems; a Stats that is not a struct has no field Refused; a package
// with one guard names its policy adapters as one with more does; and the
// rules of a guard's package (Stats.Refused, the names of policy
// adapters) do not apply to a package without guards.
func TestCheckGuardRules(t *testing.T) {
	got, err := apishape.Check(apishape.Rules{
		Dir:    "testdata/guards",
		Guards: map[string][]string{"g": {"Guard", "Missing"}, "one": {"Guard"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"g.Guard: a guard needs a method Snapshot() telemetry.Snapshot",
		"g.Missing: listed as a guard, but no such type",
		"g.Stats: a guard's Stats counts its refusals in a field Refused",
		"one.OtherPolicy: a guard's policy adapter is Policy (the primary guard's) or <Guard>Policy for a guard type of the package",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems mismatch (-want +got):\n%s", diff)
	}
}
