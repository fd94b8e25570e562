package cache_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/cache"
)

// MaxBytes bounds the whole cache, however large MaxEntries is.
func TestMaxBytesBoundsTheWholeCache(t *testing.T) {
	c := cache.New[string](time.Hour, cache.WithMaxEntries(4096), cache.WithMaxBytes(3),
		cache.WithSize(func(s string) int64 { return int64(len(s)) }))
	get := cache.Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) { return "v", nil })
	for i := range 64 {
		_, _ = get(context.Background(), strconv.Itoa(i))
	}
	if s := c.Stats(); s.Bytes > 3 || s.Entries > 3 || s.Evictions != 64-uint64(s.Entries) {
		t.Fatalf("stats %+v: want at most 3 bytes held, the rest evicted", s)
	}
}

// A MaxBytes of 1, the smallest bound, also bounds the whole cache: a
// byte-bounded cache is not split into shards that each hold MaxBytes.
func TestMaxBytesOfOneBoundsTheWholeCache(t *testing.T) {
	c := cache.New[string](time.Hour, cache.WithMaxBytes(1),
		cache.WithSize(func(s string) int64 { return int64(len(s)) }))
	get := cache.Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) { return "v", nil })
	for i := range 64 {
		_, _ = get(context.Background(), strconv.Itoa(i))
	}
	if s := c.Stats(); s.Bytes != 1 || s.Entries != 1 || s.Evictions != 63 {
		t.Fatalf("stats %+v: want 1 byte held, the other 63 entries evicted", s)
	}
}

// The smallest TTL, 1ns, is valid.
func TestNewWithATTLOfOneNanosecond(t *testing.T) {
	c := cache.New[string](1)
	if c == nil {
		t.Fatal("New(1ns) returned nil")
	}
}
