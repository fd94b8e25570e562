package cache_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// A value whose size is negative is returned but not stored, and removes
// the key's older value, from the in-memory store and from a Store alike.
func TestNegativeSizeIsNotStored(t *testing.T) {
	for _, withStore := range []bool{false, true} {
		name := "in-memory"
		if withStore {
			name = "Store"
		}
		t.Run(name, func(t *testing.T) {
			testwait.Bubble(t, func(t *testing.T) {
				clk := clock.NewFake()
				size := func(s string) int64 {
					if s == "bad" {
						return -1
					}
					return int64(len(s))
				}
				st := &mapStore{m: map[string]cache.Entry[string]{}}
				opts := []cache.Option{cache.WithClock(clk), cache.WithSize(size), cache.WithStaleIfError(time.Hour)}
				if withStore {
					opts = append(opts, cache.WithStore[string](st))
				}
				c := cache.New[string](time.Second, opts...)
				p := c.Policy()
				wantDo(t, p, "k", func(context.Context) (string, error) { return "ok", nil }, "ok", nil)
				synctest.Wait()
				if withStore {
					if _, ok := st.m["k"]; !ok {
						t.Fatal("the value was not given to the Store")
					}
				} else if s := c.Stats(); s.Entries != 1 || s.Bytes != 2 {
					t.Fatalf("stats %+v: want 1 entry of 2 bytes", s)
				}
				clk.Advance(time.Second)
				wantDo(t, p, "k", func(context.Context) (string, error) { return "bad", nil }, "bad", nil)
				synctest.Wait()
				if _, ok := st.m["k"]; ok {
					t.Fatal("the Store still holds the older value")
				}
				if s := c.Stats(); s.Entries != 0 || s.Bytes != 0 {
					t.Fatalf("stats %+v: want nothing held", s)
				}
				// The older value is gone: StaleIfError has nothing to serve.
				wantDo(t, p, "k", func(context.Context) (string, error) { return "", errDown }, "", errDown)
			})
		})
	}
}
