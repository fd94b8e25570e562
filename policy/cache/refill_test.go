package cache_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// A cache emptied by Purge, or by Invalidate of every key, holds as many
// new keys as before, each found again; Purge of an empty cache is a no-op.
func TestRefillAfterRemovals(t *testing.T) {
	for _, how := range []string{"Purge", "Invalidate"} {
		t.Run(how, func(t *testing.T) {
			c := cache.New[string](time.Hour, cache.WithMaxEntries(100))
			c.Purge(context.Background())
			var loads int
			get := cache.Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) {
				loads++
				return k, nil
			})
			ctx := context.Background()
			fill := func(round, n int) {
				for i := range n {
					k := strconv.Itoa(round*1000 + i)
					if v, _ := get(ctx, k); v != k {
						t.Errorf("got %q for %q", v, k) // not Fatalf: off the test's goroutine
						return
					}
				}
			}
			done := make(chan struct{}, 1)
			go func() {
				defer close(done)
				for round := range 4 {
					loads = 0
					fill(round, 6+round*10)
					fill(round, 6+round*10) // all hits
					if loads != 6+round*10 {
						t.Errorf("round %d: %d loads for %d keys, want each key loaded once", round, loads, 6+round*10)
					}
					if how == "Purge" {
						c.Purge(ctx)
					} else {
						for i := range 6 + round*10 {
							c.Invalidate(ctx, strconv.Itoa(round*1000+i))
						}
					}
					if s := c.Stats(); s.Entries != 0 {
						t.Errorf("round %d: %d entries after %s", round, s.Entries, how)
					}
				}
			}()
			testwait.RecvFor(t, done, 5*time.Second, "rounds of stores and removals")
		})
	}
}
