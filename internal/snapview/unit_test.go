package snapview

import (
	"testing"

	"github.com/f0b5b96b/resilience/telemetry"
)

// A value without its unit (its help given) does not describe itself
// either: Of panics, naming it.
func TestOfPanicsOnAValueWithoutItsUnit(t *testing.T) {
	defer func() {
		if r := recover(); r != "value a does not describe itself" {
			t.Fatalf("panic %v, want one naming the value", r)
		}
	}()
	Of(telemetry.Snapshot{Values: []telemetry.Value{{Name: "a", Help: "h"}}})
}
