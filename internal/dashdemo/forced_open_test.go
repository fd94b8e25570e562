package dashdemo

import (
	"io"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/telemetry"
)

// The recommendations breaker is forced open from the start: every call
// is refused before it reaches the server, and the fallback answers with
// the cached price; the other dependencies' breakers are closed.
func TestRecommendationsForcedOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, requests := newInMemory(t, Config{})
		defer d.Close()
		states := map[string]string{}
		for _, s := range d.Registry.Snapshots() {
			states[s.Name] = s.State
		}
		want := map[string]string{
			"prices": telemetry.StateClosed, "inventory": telemetry.StateClosed,
			"search": telemetry.StateClosed, "recommendations": telemetry.StateOpen,
		}
		if diff := cmp.Diff(want, states); diff != "" {
			t.Errorf("breaker states mismatch (-want +got):\n%s", diff)
		}
		dp := d.deps[3]
		if dp.name != "recommendations" {
			t.Fatalf("deps[3] is %s, want recommendations", dp.name)
		}
		resp, err := dp.client.Get(dp.url)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if got := []string{resp.Status, resp.Header.Get("X-From-Cache"), string(body)}; !cmp.Equal(got, []string{"200 OK", "1", "41.50"}) {
			t.Errorf("recommendations answered %q, want the fallback's [200 OK 1 41.50]", got)
		}
		if n := requests("/recommendations"); n != 0 {
			t.Errorf("%d requests reached the recommendations server, want none", n)
		}
	})
}
