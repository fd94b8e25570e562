package cache

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// Every call of a cache returns: a store that grows its shard's table
// many times, a hit, a removal that leaves a tomb, a store that reuses
// one, an eviction and a Purge all end. The
// workload runs on a goroutine of its own, so that a probe or an
// eviction that never ends fails the test (after a bound far beyond the
// milliseconds it takes) instead of hanging it. These tests sort first in
// the package, so that they fail before any other test hangs.
func TestCallsReturn(t *testing.T) {
	for _, tc := range []struct {
		name string
		max  int
		keys int
	}{
		{"one shard, no eviction", 1000, 200},
		{"one shard, evicting", 4, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- callsReturnWorkload(tc.max, tc.keys) }()
			// A call that never returns may hold a shard's lock for ever,
			// and a wrong answer may leave a load that never lands: the
			// examples, which -failfast does not stop, would then hang on
			// them. So this test ends the test binary, with every
			// goroutine's stack, rather than fail and go on.
			select {
			case err := <-done:
				if err != nil {
					panic(err)
				}
			case <-time.After(2 * time.Second):
				panic("the cache's calls did not return after 2s")
			}
		})
	}
}

// callsReturnWorkload stores keys keys in a cache of MaxEntries max,
// removes and stores them again and purges it, checking what each call
// returns; it returns the first wrong answer.
func callsReturnWorkload(max, keys int) error {
	c := New[string](time.Hour, WithMaxEntries(max))
	loads := 0
	get := Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) {
		loads++
		return "v" + k, nil
	})
	ctx := context.Background()
	check := func(k string, wantHit bool) error {
		ictx, info := WithInfo(ctx)
		v, err := get(ictx, k)
		if v != "v"+k || err != nil {
			return fmt.Errorf("get(%s) = %q, %v; want %q", k, v, err, "v"+k)
		}
		if wantHit && info.Outcome != Hit {
			return fmt.Errorf("get(%s): %v, want a hit", k, info.Outcome)
		}
		return nil
	}
	held := min(max, keys)
	for round := range 2 {
		for i := range keys {
			if err := check(strconv.Itoa(i), false); err != nil {
				return err
			}
		}
		for i := keys - held; i < keys; i++ {
			if err := check(strconv.Itoa(i), held == keys); err != nil {
				return err
			}
		}
		for i := 0; i < keys; i += 2 {
			c.Invalidate(ctx, strconv.Itoa(i)) // tombs
		}
		for i := 0; i < keys; i += 2 {
			if err := check(strconv.Itoa(i), false); err != nil {
				return err
			}
		}
		if s := c.Stats(); s.Entries > max || (held == keys && s.Entries != keys) {
			return fmt.Errorf("round %d: %d entries held of %d stored, MaxEntries %d", round, s.Entries, keys, max)
		}
		c.Purge(ctx)
		if s := c.Stats(); s.Entries != 0 {
			return fmt.Errorf("round %d: %d entries held after Purge", round, s.Entries)
		}
	}
	if want := 2 * (keys + (keys+1)/2); held == keys && loads != want {
		return fmt.Errorf("%d loads, want %d", loads, want)
	}
	return nil
}
