package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/pipeline"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// quickstartDoc is the README's quick start as a document: fallback >
// retry > breaker > timeout, the fallback a kind of the user's own (a
// function cannot be written in JSON).
const quickstartDoc = `{
	"guards": {"pricing": {"kind": "breaker", "config": {"Cooldown": "1s"}}},
	"pipelines": {"price": [
		{"kind": "last-known-price", "config": {"Price": 9.99}},
		{"kind": "retry", "config": {"MaxElapsed": "2s"}},
		{"guard": "pricing"},
		{"kind": "timeout", "config": {"Duration": "200ms"}}
	]}}`

func lastKnownPrice() pipeline.Option {
	return pipeline.WithKind("last-known-price", func(config json.RawMessage) (resilience.Policy[float64], error) {
		var c struct{ Price float64 }
		if err := json.Unmarshal(config, &c); err != nil {
			return resilience.Policy[float64]{}, err
		}
		return resilience.Fallback(func(context.Context, error) (float64, error) { return c.Price, nil }), nil
	})
}

// One document builds the quick start's pipeline: the same layers, in the
// same order, doing the same thing (three calls to a dependency that is
// down: 3 calls, then 2 and the breaker open, then none while it is open).
func TestDocumentBuildsTheQuickStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		doc, err := pipeline.Parse([]byte(quickstartDoc))
		if err != nil {
			t.Fatal(err)
		}
		ps, err := pipeline.Build[float64](doc, lastKnownPrice())
		if err != nil {
			t.Fatal(err)
		}
		pricing := ps.Guards["pricing"].(*breaker.Breaker)
		inGo := resilience.Then(
			resilience.Fallback(func(context.Context, error) (float64, error) { return 9.99, nil }),
			retry.New[float64](retry.WithMaxElapsed(2*time.Second)),
			breaker.Policy[float64](breaker.New(breaker.WithName("pricing"), breaker.WithCooldown(time.Second))),
			timeout.New[float64](200*time.Millisecond),
		)
		p := ps.Policies["price"]
		if diff := cmp.Diff(inGo.String(), p.String()); diff != "" {
			t.Errorf("layers mismatch (-in Go +from the document):\n%s", diff)
		}
		var out strings.Builder
		calls := 0
		for range 3 {
			calls = 0
			price, err := p.Do(context.Background(), func(context.Context) (float64, error) {
				calls++
				return 0, errors.New("pricing: 503 Service Unavailable")
			})
			fmt.Fprintf(&out, "price %.2f, err %v; pricing called %d times; breaker %s\n", price, err, calls, pricing.State())
		}
		want := "price 9.99, err <nil>; pricing called 3 times; breaker closed\n" +
			"price 9.99, err <nil>; pricing called 2 times; breaker open\n" +
			"price 9.99, err <nil>; pricing called 0 times; breaker open\n"
		if diff := cmp.Diff(want, out.String()); diff != "" {
			t.Errorf("output mismatch (-want +got):\n%s", diff)
		}
	})
}
