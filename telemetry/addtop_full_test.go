package telemetry_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/telemetry"
)

// A full Top keeps its TopKeys keys when a key ranks after all of them
// (fewer refusals, or as many with a later key), and drops its last for
// one that ranks before.
func TestAddTopFullList(t *testing.T) {
	var top []telemetry.KeyStat
	for i := range telemetry.TopKeys {
		top = telemetry.AddTop(top, telemetry.KeyStat{Key: fmt.Sprint("k", i), Refused: 10})
	}
	full := append([]telemetry.KeyStat(nil), top...)
	for _, k := range []telemetry.KeyStat{{Key: "z", Refused: 9}, {Key: "k9", Refused: 10}} {
		top = telemetry.AddTop(top, k)
		if diff := cmp.Diff(full, top); diff != "" {
			t.Errorf("AddTop(%+v) to a full list mismatch (-want +got):\n%s", k, diff)
		}
	}
	top = telemetry.AddTop(top, telemetry.KeyStat{Key: "a", Refused: 10})
	want := append([]telemetry.KeyStat{{Key: "a", Refused: 10}}, full[:telemetry.TopKeys-1]...)
	if diff := cmp.Diff(want, top); diff != "" {
		t.Errorf("AddTop of a key ranking first mismatch (-want +got):\n%s", diff)
	}
}
