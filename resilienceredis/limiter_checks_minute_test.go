package resilienceredis

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// The check of the server in the background runs at the first decision
// Redis answers, "then every minute": a decision Redis answers a minute
// after the last check (to the nanosecond) starts the next one, and none
// before.
func TestLimiterChecksAgainAfterAMinute(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		ctx := context.Background()
		rdb := &scriptedRedis{}
		l := NewLimiter(rdb, "minute", 1, 10, WithTimeout(time.Hour))
		defer l.Close()
		step := func(d time.Duration, want int64) {
			t.Helper()
			time.Sleep(d)
			if !l.Allow(ctx) {
				t.Fatal("Allow = false, want the fake bucket's token")
			}
			synctest.Wait() // the check, if one started
			if n := rdb.settings.Load(); n != want {
				t.Errorf("after a decision %v later: %d checks of the server, want %d", d, n, want)
			}
		}
		step(0, 1)               // the first decision Redis answers
		step(time.Minute-1, 1)   // a nanosecond short of a minute
		step(1, 2)               // a minute after the first check
		step(time.Minute-1, 2)   // a nanosecond short of a minute after that one
		step(time.Nanosecond, 3) // a minute after it
	})
}
