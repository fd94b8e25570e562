package resilienceredis

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// After a round trip fails, a limiter on a client that can reload its
// view of a cluster (ReloadState, as *redis.ClusterClient has) asks it to,
// in the background, and probes Redis again about 100ms after it instead
// of a ProbeInterval later (doc.go, "Failover"): the next decision then
// asks Redis.
func TestLimiterReloadsAfterAFailedRoundTrip(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		ctx := context.Background()
		var down atomic.Bool
		down.Store(true)
		rdb := &reloadingRedis{scriptedRedis: &scriptedRedis{gcra: func(context.Context) (any, error) {
			if down.Load() {
				return nil, errors.New("test: the primary is gone")
			}
			return []any{int64(1), int64(-1000), int64(0)}, nil
		}}}
		l := NewLimiter(rdb, "reload", 1, 10, WithTimeout(time.Hour), WithProbeInterval(time.Hour))
		defer l.Close()
		l.Allow(ctx) // fails: the fallback decides, and the client is asked to reload
		synctest.Wait()
		if n := rdb.reloads.Load(); n != 1 {
			t.Fatalf("%d reloads after a failed round trip, want 1", n)
		}
		down.Store(false)
		time.Sleep(time.Second) // past the reload's settling, an hour short of ProbeInterval
		l.Allow(ctx)
		want := map[string]float64{"local": 0, "decisions_shared": 1, "decisions_local": 1}
		if diff := cmp.Diff(want, values(t, l.Snapshot())); diff != "" {
			t.Errorf("a second after the reload the decision did not ask Redis again: snapshot mismatch (-want +got):\n%s", diff)
		}
	})
}

// Close does not wait for a reload to settle: the probe it would make is
// of no use to a limiter that asks Redis nothing more, and Close ends the
// wait (no time passes in Close).
func TestLimiterCloseEndsTheReloadWait(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		rdb := &reloadingRedis{scriptedRedis: &scriptedRedis{gcra: func(context.Context) (any, error) {
			return nil, errors.New("test: the primary is gone")
		}}}
		l := NewLimiter(rdb, "reloadclose", 1, 10, WithTimeout(time.Hour), WithProbeInterval(time.Hour))
		l.Allow(context.Background())
		synctest.Wait()
		if n := rdb.reloads.Load(); n != 1 {
			t.Fatalf("%d reloads after a failed round trip, want 1", n)
		}
		start := time.Now()
		l.Close()
		if d := time.Since(start); d != 0 {
			t.Errorf("Close took %v of the bubble's clock, want 0: it waited out the reload's settling", d)
		}
	})
}
