package resilienceredis

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
)

// reloadingClient is a client that can refresh its view of a cluster, as a
// *redis.ClusterClient can: it counts the times it is asked to.
type reloadingClient struct {
	*redis.Client
	reloads atomic.Int32
}

func (c *reloadingClient) ReloadState(context.Context) { c.reloads.Add(1) }

// When a round trip fails on a client that can refresh its view of the
// cluster (a failover), the client is asked to, and the instance tries
// Redis again at its next tick once the view has settled, not a
// ProbeInterval later.
func TestBreakerProbesAfterReload(t *testing.T) {
	rdb := &reloadingClient{Client: clientOf(t, redistest.Addr(t))}
	b := newBreaker(rdb, "svc", []BreakerOption{WithPrefix(testPrefix(t)), WithTimeout(5 * time.Second), WithProbeInterval(time.Hour)})
	t.Cleanup(func() { b.Close() })
	b.sync()
	b.goDown(errUnreachable) // a round trip failed
	b.rem.wg.Wait()          // the reload and its wait for the view to settle (reloadSettle)
	if n := rdb.reloads.Load(); n != 1 {
		t.Fatalf("%d reloads of the client's view, want 1", n)
	}
	b.tick()
	if v := values(t, b.Snapshot()); v["local"] != 0 {
		t.Errorf("the first tick after the reload: local %v, want 0 (Redis tried again at once, and answered)", v["local"])
	}
}

// Close does not wait for a reload's wait for the view to settle: it ends
// it. In a synctest bubble, Close takes no time.
func TestBreakerCloseEndsReloadWait(t *testing.T) {
	sc := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		rdb := &reloadingClient{Client: sc.Client}
		b := newBreaker(rdb, "svc", []BreakerOption{WithProbeInterval(time.Hour)})
		b.goDown(errUnreachable) // a round trip failed: the client reloads its view
		synctest.Wait()
		start := time.Now()
		b.Close()
		if d := time.Since(start); d != 0 {
			t.Errorf("Close took %v of the bubble's time, want 0 (it ends the reload's wait)", d)
		}
		if n := rdb.reloads.Load(); n != 1 {
			t.Errorf("%d reloads of the client's view, want 1", n)
		}
	})
}
