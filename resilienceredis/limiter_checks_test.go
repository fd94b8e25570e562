package resilienceredis

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// settingsHook counts the runs of the settings script (the check of the
// server that decisions start in the background; an EVAL after NOSCRIPT
// is the same run) and, if fail, fails them.
type settingsHook struct {
	runs *atomic.Int64
	fail bool
}

func (h settingsHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h settingsHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if a := cmd.Args(); cmd.Name() == "evalsha" && len(a) > 1 && a[1] == settingsScript.Hash() {
			h.runs.Add(1)
			if h.fail {
				err := errors.New("test: the check fails")
				cmd.SetErr(err)
				return err
			}
		}
		return next(ctx, cmd)
	}
}
func (h settingsHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// decideFor makes a decision every 10ms for d, then closes l (which waits
// for the checks in the background), and returns how long it took.
func decideFor(t *testing.T, l *Limiter, d time.Duration) time.Duration {
	ctx := ctxFor(t)
	start := time.Now()
	for i := 0; i < 1000 && time.Since(start) < d; i++ {
		l.Allow(ctx)
		time.Sleep(10 * time.Millisecond)
	}
	l.Close()
	return time.Since(start)
}

// The check of the server that decisions start in the background runs at
// the first decision Redis answers and then once a minute, not at every
// ProbeInterval; a check that fails is tried again by the first decision
// after ProbeInterval, not a minute later, nor at every decision.
func TestLimiterChecksTheServerOnSchedule(t *testing.T) {
	const probe = 100 * time.Millisecond
	t.Run("answered", func(t *testing.T) {
		var runs atomic.Int64
		rdb := newClient(t)
		rdb.AddHook(settingsHook{runs: &runs})
		l := NewLimiter(rdb, "checks", 1e5, 10, WithPrefix(testPrefix(t)), WithProbeInterval(probe))
		decideFor(t, l, 5*probe)
		if n := runs.Load(); n != 1 {
			t.Errorf("%d checks of the server within a minute of the first decision, want 1", n)
		}
	})
	t.Run("failed", func(t *testing.T) {
		var runs atomic.Int64
		rdb := newClient(t)
		rdb.AddHook(settingsHook{runs: &runs, fail: true})
		l := NewLimiter(rdb, "checks", 1e5, 10, WithPrefix(testPrefix(t)), WithProbeInterval(probe))
		took := decideFor(t, l, 5*probe)
		most := int64(took/probe) + 2
		if n := runs.Load(); n < 2 || n > most {
			t.Errorf("%d checks of the server in %v of decisions every 10ms, want in [2, %d]: one per ProbeInterval (%v)", n, took, most, probe)
		}
	})
}
