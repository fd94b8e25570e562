package apishape_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/apishape"
)

// Check reads the module's own packages only: not internal, testdata,
// examples, hidden or _ directories, nested modules or commands, each of
// which has a Stats with a field Rejected in testdata/walk.
func TestCheckSkips(t *testing.T) {
	got, err := apishape.Check(apishape.Rules{Dir: "testdata/walk", Guards: map[string][]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), got); diff != "" {
		t.Errorf("problems mismatch (-want +got):\n%s", diff)
	}
}
