package cache_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// A value served stale while revalidating is reported as cache.stale with
// its age past the TTL and no error.
func TestStaleWhileRevalidateEvent(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		rec := &recorder{}
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleWhileRevalidate(time.Minute), cache.WithObserver(rec))
		p := c.Policy()
		wantDo(t, p, "k", func(context.Context) (string, error) { return "v", nil }, "v", nil)
		synctest.Wait()
		clk.Advance(3 * time.Second)
		rec.take()
		wantDo(t, p, "k", func(context.Context) (string, error) { return "w", nil }, "v", nil)
		synctest.Wait()
		if diff := cmp.Diff([]string{"cache.stale k age=2s"}, rec.take()); diff != "" {
			t.Fatalf("events mismatch (-want +got):\n%s", diff)
		}
	})
}
