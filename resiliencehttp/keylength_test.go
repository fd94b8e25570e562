package resiliencehttp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resiliencehttp"
	"github.com/f0b5b96b/resilience/telemetry"
)

// A key of 64 bytes is not longer than 64 bytes: it is tracked as it is,
// and the events carry it as the request's key.
func TestMiddlewareKeyOf64BytesIsTrackedAsItIs(t *testing.T) {
	limits := ratelimit.NewKeyed[string](ratelimit.Every(time.Minute), 1)
	var obs events
	h := resiliencehttp.Middleware(resilience.Policy[struct{}]{}, resiliencehttp.WithKeyedLimit(byHeader, limits),
		resiliencehttp.WithObserver(&obs))(http.HandlerFunc(ok))
	key := strings.Repeat("k", 64)
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("X-Key", key)
	h.ServeHTTP(httptest.NewRecorder(), r)
	want := []telemetry.Event{{Type: resiliencehttp.EventAnswered, Name: "identity", Key: key}}
	if diff := cmp.Diff(want, obs.got, errorsIs); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}
