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

// A stale value served in place of a failed load counts in Stats.Stale; a
// failed load of a miss is no refresh failure, whether it runs in the
// caller's goroutine (a context that cannot end) or in its own.
func TestStatsOfFailedLoads(t *testing.T) {
	for _, cancellable := range []bool{false, true} {
		testwait.Bubble(t, func(t *testing.T) {
			clk := clock.NewFake()
			rec := &recorder{}
			c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleIfError(time.Minute), cache.WithObserver(rec))
			p := c.Policy()
			ctx := cache.Key(context.Background(), "k")
			if cancellable {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
			}
			fail := func(context.Context) (string, error) { return "", errDown }
			if _, err := p.Do(ctx, fail); err == nil {
				t.Fatal("a failed load with nothing stored returned no error")
			}
			if _, err := p.Do(ctx, func(context.Context) (string, error) { return "v", nil }); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			clk.Advance(2 * time.Second)
			if v, err := p.Do(ctx, fail); v != "v" || err != nil {
				t.Fatalf("got (%q, %v), want the stale v", v, err)
			}
			synctest.Wait()
			if diff := cmp.Diff(cache.Stats{Misses: 3, Stale: 1, Entries: 1}, c.Stats()); diff != "" {
				t.Fatalf("cancellable %v: stats mismatch (-want +got):\n%s", cancellable, diff)
			}
			for _, e := range rec.take() {
				if e == "cache.refresh_failed k err=dependency down" {
					t.Fatalf("cancellable %v: a miss's failed load was reported as a refresh failure", cancellable)
				}
			}
		})
	}
}
