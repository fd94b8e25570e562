package resiliencehttp_test

import (
	"testing"

	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/telemetry"
)

// WithCritical keeps the names it was given: a caller that reuses its
// slice afterwards does not change which guards are critical.
func TestWithCriticalKeepsItsNames(t *testing.T) {
	reg := telemetry.NewRegistry()
	names := []string{"payments"}
	opt := resiliencehttp.WithCritical(names...)
	names[0] = "changed"
	srv := serveHealth(t, resiliencehttp.Health(reg, opt))
	wantProbe(t, "names changed after WithCritical", srv, 503,
		`{"status": "unavailable", "missing": ["payments"], "guards": []}`)
}
