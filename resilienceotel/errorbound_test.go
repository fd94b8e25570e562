package resilienceotel_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// typedErr is an error whose Go type, and so error.type, differs for each
// T: typedErr[pair[A, B]] for 9×9 type arguments makes 81 distinct error
// types.
type typedErr[T any] struct{}

func (typedErr[T]) Error() string { return "typed" }

type pair[A, B any] struct{}

type (
	t0 struct{}
	t1 struct{}
	t2 struct{}
	t3 struct{}
	t4 struct{}
	t5 struct{}
	t6 struct{}
	t7 struct{}
	t8 struct{}
)

func row[A any]() []error {
	return []error{
		typedErr[pair[A, t0]]{}, typedErr[pair[A, t1]]{}, typedErr[pair[A, t2]]{},
		typedErr[pair[A, t3]]{}, typedErr[pair[A, t4]]{}, typedErr[pair[A, t5]]{},
		typedErr[pair[A, t6]]{}, typedErr[pair[A, t7]]{}, typedErr[pair[A, t8]]{},
	}
}

// The distinct values of error.type one Metrics reports are bounded, 64:
// the first 64 types seen keep their name, every later one reads as
// "_OTHER", so errors of many types cannot grow the number of series
// without bound. A type admitted before keeps its name.
func TestErrorTypeCardinalityIsBounded(t *testing.T) {
	var errs []error
	for _, r := range [][]error{row[t0](), row[t1](), row[t2](), row[t3](), row[t4](), row[t5](), row[t6](), row[t7](), row[t8]()} {
		errs = append(errs, r...)
	}
	m, reader := newMetrics(t)
	for _, err := range errs { // 81 types
		m.Observe(telemetry.Event{Type: breaker.EventFailure, Name: "b", Err: err})
	}
	m.Observe(telemetry.Event{Type: breaker.EventFailure, Name: "b", Err: errs[0]}) // seen: keeps its name

	counts := make(map[string]int64) // error.type: events
	for _, p := range collect(t, reader)["resilience.events"].Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := p.Attributes.Value("error.type")
		counts[v.AsString()] += p.Value
	}
	first := fmt.Sprintf("%T", errs[0]) // error.type of a Go type is its name
	got := []any{len(counts), counts["_OTHER"], counts[first]}
	if diff := cmp.Diff([]any{64 + 1, int64(81 - 64), int64(2)}, got); diff != "" {
		t.Errorf("error.type values (64 and _OTHER), events under _OTHER, under the first type mismatch (-want +got):\n%s", diff)
	}
}
