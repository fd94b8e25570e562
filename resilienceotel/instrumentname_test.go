package resilienceotel_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/resilienceotel"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
)

// TestValueInstrumentNames: a guard's value is the instrument
// resilience.<kind>.<name>, where each character an instrument name may
// not hold (other than ASCII letters, digits, '_', '.', '-' and '/') is an
// underscore.
func TestValueInstrumentNames(t *testing.T) {
	reg := telemetry.NewRegistry()
	if err := reg.Register(exporttest.FakeGuard{S: telemetry.Snapshot{Kind: "my kind", Name: "g", Values: []telemetry.Value{
		{Name: "az_AZ09-./x", Value: 1},
		{Name: "`{@[:é", Value: 2},
	}}}); err != nil {
		t.Fatal(err)
	}
	_, reader := newMetrics(t, resilienceotel.WithRegistry(reg))
	var got []string
	for _, n := range names(collect(t, reader)) {
		if strings.HasPrefix(n, "resilience.my") {
			got = append(got, n)
		}
	}
	want := []string{"resilience.my_kind.______", "resilience.my_kind.az_AZ09-./x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("instrument names mismatch (-want +got):\n%s", diff)
	}
}
