package resilienceredis

import (
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/cache"
)

// An entry's Redis expiry (PXAT, to the millisecond) is its Discard time
// rounded up to the millisecond: Redis forgets it when the cache no longer
// can use it, never before (a Discard on a millisecond is that
// millisecond; one past it, the next).
func TestCacheStoreExpiryRoundsUp(t *testing.T) {
	ctx := ctxFor(t)
	prefix := testPrefix(t)
	s := newUserStore(t, prefix, WithCacheTimeout(10*time.Second))
	rdb := newClient(t)
	// Fixed instants, far ahead of the wall clock, so that every run
	// checks the same values.
	base := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		off  time.Duration
		want int64 // ms after base
	}{
		{0, 0},
		{1, 1},
		{2, 1},
		{999_999, 1},
		{time.Millisecond, 1},
		{time.Millisecond + 1, 2},
	} {
		d := base.Add(tc.off)
		s.Set(ctx, "k", cache.Entry[user]{Value: user{"Ada", 36}, Expires: d, Discard: d})
		key := prefix + "cache:{users}:0:k"
		got, err := rdb.PExpireTime(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Duration(base.UnixMilli()+tc.want) * time.Millisecond; got != want {
			t.Errorf("Discard base+%v: PEXPIRETIME = base+%v; want base+%v", tc.off,
				got-time.Duration(base.UnixMilli())*time.Millisecond, want-time.Duration(base.UnixMilli())*time.Millisecond)
		}
		if err := rdb.Del(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
	}
}
