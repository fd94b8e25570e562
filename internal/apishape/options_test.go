package apishape_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/apishape"
)

// Rule 4 reads every func literal of a With... function but WithConfig,
// each for the fields of its own parameter only (a field's field is the
// field; ++ and -- assign; a variable is not the config); rule 5 wants
// methods, all unexported or embedded from sealed interfaces of the
// package, and does not loop on an interface that embeds itself.
func TestCheckOptionRules(t *testing.T) {
	type result struct {
		problems []string
		err      error
	}
	done := make(chan result, 1)
	go func() {
		p, err := apishape.Check(apishape.Rules{Dir: "testdata/options"})
		done <- result{p, err}
	}()
	var got result
	select {
	case got = <-done:
	case <-time.After(10 * time.Second): // a bound, not a wait: Check reads a few lines
		t.Fatal("Check did not return within 10s")
	}
	if got.err != nil {
		t.Fatal(got.err)
	}
	const notSealed = ": an Option is a sealed interface (interface{ apply(*config) }), not an interface with an exported method, or one embedded from elsewhere"
	want := []string{
		"opt.EmptyOption" + notSealed,
		"opt.LoopOption" + notSealed,
		"opt.OpenOption" + notSealed,
		"opt.TermOption" + notSealed,
		"opt.WithBump: an option sets one field, this one sets max, min",
		"opt.WithLazy: an option sets one field, this one sets max, min",
		"opt.WithMixed: an option sets one field, this one sets limits, min",
		"opt.WrapOption" + notSealed,
	}
	if diff := cmp.Diff(want, got.problems); diff != "" {
		t.Errorf("problems mismatch (-want +got):\n%s", diff)
	}
}
