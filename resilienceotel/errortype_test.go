package resilienceotel_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceotel/internal/export/exporttest"
	"github.com/f0b5b96b/resilience/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestErrorType: error.type is the name of the library's condition an
// error matches, else its Go type, looking through fmt.Errorf, errors.Join
// and a retry.Error (to its last attempt's error); no error, no attribute.
func TestErrorType(t *testing.T) {
	cases := exporttest.ErrorTypes(t, downError{}, downType)
	for i, c := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			m, reader := newMetrics(t)
			m.Observe(telemetry.Event{Type: breaker.EventFailure, Name: "b", Err: c.Err})
			want := []attribute.KeyValue{ptype("breaker"), pname("b"), event(breaker.EventFailure)}
			if c.Want != "" {
				want = append(want, errtype(c.Want))
			}
			pts := collect(t, reader)["resilience.events"].Data.(metricdata.Sum[int64]).DataPoints
			if len(pts) != 1 {
				t.Fatalf("%d points, want 1", len(pts))
			}
			if diff := cmp.Diff(attrMap(attribute.NewSet(want...)), attrMap(pts[0].Attributes)); diff != "" {
				t.Errorf("error %v: attributes mismatch (-want +got):\n%s", c.Err, diff)
			}
		})
	}
}

// attrMap is a set of attributes as strings, for cmp.
func attrMap(s attribute.Set) map[string]string {
	out := make(map[string]string)
	for _, kv := range s.ToSlice() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}
