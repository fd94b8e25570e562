package cache

import (
	"testing"
	"time"
)

// A cache of 1024 entries or more, and no MaxBytes, splits its keys over
// 16 shards; the default MaxEntries (10 000) is such a bound. A smaller
// cache, or one with MaxBytes, has one shard.
func TestShardsFollowTheResolvedBound(t *testing.T) {
	size := WithSize(func(s string) int64 { return int64(len(s)) })
	for _, tc := range []struct {
		name string
		opts []Option
		want int
	}{
		{"the default MaxEntries", nil, 16},
		{"MaxEntries 1024", []Option{WithMaxEntries(1024)}, 16},
		{"MaxEntries 1023", []Option{WithMaxEntries(1023)}, 1},
		{"the default MaxEntries and MaxBytes", []Option{WithMaxBytes(1), size}, 1},
		{"MaxEntries 4096 and MaxBytes", []Option{WithMaxEntries(4096), WithMaxBytes(1), size}, 1},
	} {
		if got := len(New[string](time.Hour, tc.opts...).shards); got != tc.want {
			t.Errorf("%s: %d shards, want %d", tc.name, got, tc.want)
		}
	}
}
