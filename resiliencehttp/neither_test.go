package resiliencehttp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// A Policy that returns neither a response nor an error (a layer of one's
// own that returns the zero value) does not make RoundTrip break the
// RoundTripper contract: the caller gets an error, never (nil, nil).
func TestPolicyReturningNeitherResponseNorErrorIsAnError(t *testing.T) {
	nothing := resilience.New("nothing", func(ctx context.Context, next resilience.Next[*http.Response]) (*http.Response, error) {
		return nil, nil
	})
	sent := 0
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent++
		return nil, nil
	})
	req, _ := http.NewRequestWithContext(bounded(t), http.MethodGet, "http://dependency.test/", nil)
	resp, err := (&resiliencehttp.Transport{Base: base, Policy: nothing}).RoundTrip(req)
	if resp != nil {
		t.Errorf("RoundTrip returned a response (%d), want none", resp.StatusCode)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "resiliencehttp: ") {
		t.Errorf("RoundTrip returned error %v, want one from resiliencehttp", err)
	}
	if sent != 0 {
		t.Errorf("the Base was sent %d requests, want 0", sent)
	}
}
