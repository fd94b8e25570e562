package resilienceotel_test

import (
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/resilienceotel/internal/apishape"
)

// The module's exported API has the shape every package of the repository
// shares (see package apishape for the rules); its exemptions give their
// reasons.
func TestAPIShape(t *testing.T) {
	problems, err := apishape.Check(apishape.Rules{
		Dir: ".",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("the API does not have its shape:\n%s", strings.Join(problems, "\n"))
	}
}
