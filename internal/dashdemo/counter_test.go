package dashdemo

import (
	"io"
	"testing"
	"testing/synctest"

	"github.com/f0b5b96b/resilience/policy/retry"
)

// Counter observes the registry: it counts the pipelines' events.
func TestCounterCountsEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _ := newInMemory(t, Config{})
		defer d.Close()
		dp := d.deps[1] // inventory: healthy
		for range 2 {
			resp, err := dp.client.Get(dp.url)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if n := d.Counter.Count(dp.name, retry.EventCall); n != 2 {
			t.Errorf("Counter: %d %s events of %s, want 2", n, retry.EventCall, dp.name)
		}
	})
}
