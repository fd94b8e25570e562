package resilienceredis

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/redis/go-redis/v9"
)

// Redis refusing the breaker's commands for good — a user the ACL denies
// the scripts (NOPERM), a key holding another type (WRONGTYPE), a server
// without scripting — is told as the limiter tells it: an error matching
// ErrUnusable, from Shared, in the BreakerLocal event and as the
// snapshot's Reason. The snapshot's State stays the local breaker's
// ("closed" here), its value local 1.
func TestBreakerUnusable(t *testing.T) {
	ctx := ctxFor(t)
	check := func(t *testing.T, rdb *redis.Client, prefix, want string, spoil func(key string)) {
		t.Helper()
		var rec eventlog.Recorder
		b := newBreaker(rdb, "unusable", []BreakerOption{WithPrefix(prefix), WithTimeout(5 * time.Second), WithObserver(&rec)})
		t.Cleanup(func() { b.Close() })
		if spoil != nil {
			spoil(b.keys[0])
		}
		_, err := b.Shared(ctx)
		if !errors.Is(err, ErrUnusable) || !strings.Contains(err.Error(), want) {
			t.Errorf("Shared() = %v, want ErrUnusable with the server's %s", err, want)
		}
		b.sync() // refused: the instance decides alone
		if err := succeed(b); err != nil {
			t.Errorf("the local breaker refused a call: %v", err)
		}
		local := ofType(&rec, BreakerLocal)
		if len(local) != 1 || !errors.Is(local[0].Err, ErrUnusable) || !strings.Contains(local[0].Err.Error(), want) {
			t.Fatalf("events = %+v, want one %s matching ErrUnusable with %s", rec.All(), BreakerLocal, want)
		}
		snap := b.Snapshot()
		if snap.State != telemetry.StateClosed || snap.Reason != local[0].Err.Error() || values(t, snap)["local"] != 1 {
			t.Errorf("Snapshot = %+v; want State closed (the local breaker's), Reason %q, local 1", snap, local[0].Err)
		}
	}
	t.Run("NOPERM", func(t *testing.T) {
		_, limited, _ := aclServer(t, "~*", "&*", "+@all", "-eval", "-evalsha")
		check(t, limited, testPrefix(t), "NOPERM", nil)
	})
	t.Run("WRONGTYPE", func(t *testing.T) {
		rdb := newClient(t)
		check(t, rdb, testPrefix(t), "WRONGTYPE", func(key string) {
			if err := rdb.Set(ctx, key, "x", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		})
	})
	t.Run("no scripting", func(t *testing.T) {
		s := redistest.Start(t, "--rename-command", "EVALSHA", "", "--rename-command", "EVAL", "")
		check(t, clientOf(t, s.Addr), testPrefix(t), "unknown command", nil)
	})
}
