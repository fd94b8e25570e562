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
	// before, if set, runs before each run of the settings script.
	before func()
}

func (h settingsHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h settingsHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if a := cmd.Args(); cmd.Name() == "evalsha" && len(a) > 1 && a[1] == settingsScript.Hash() {
			h.runs.Add(1)
			if h.before != nil {
				h.before()
			}
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

// Check whose context ends during the recording of the settings returns
// ctx.Err(), not the failed round trip's error.
func TestLimiterCheckContextEndsInTheSettings(t *testing.T) {
	ctx, cancel := context.WithCancel(ctxFor(t))
	var runs atomic.Int64
	rdb := newClient(t)
	rdb.AddHook(settingsHook{runs: &runs, fail: true, before: cancel})
	l := NewLimiter(rdb, "checkends", slow, 1, WithPrefix(testPrefix(t)))
	if err := l.Check(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Check() = %v, want context.Canceled", err)
	}
}

// Close waits for the check of the server running in the background:
// once it returns, the check has ended.
func TestLimiterCloseWaitsForTheCheck(t *testing.T) {
	var runs atomic.Int64
	var ended atomic.Bool
	release := make(chan struct{})
	rdb := newClient(t)
	rdb.AddHook(settingsHook{runs: &runs, before: func() { <-release; ended.Store(true) }})
	l := NewLimiter(rdb, "closewaits", slow, 5, WithPrefix(testPrefix(t)), WithTimeout(5*time.Second)) // a slow round trip is not a local decision
	if !l.Allow(ctxFor(t)) {                                                                           // starts the check, which waits for release
		t.Fatal("the first Allow was refused")
	}
	closed := make(chan bool, 1)
	go func() { l.Close(); closed <- ended.Load() }()
	time.Sleep(10 * time.Millisecond) // let Close start (a Close that does not wait returns now)
	close(release)
	select {
	case ok := <-closed:
		if !ok {
			t.Error("Close returned before the check of the server in the background ended")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10s")
	}
}

// Close of a KeyedLimiter's Limiter does nothing: the KeyedLimiter and
// its other tenants still decide in Redis.
func TestKeyedLimiterTenantCloseDoesNothing(t *testing.T) {
	ctx := ctxFor(t)
	k := NewKeyedLimiter(newClient(t), "tenantclose", slow, 1, WithPrefix(testPrefix(t)), WithTimeout(5*time.Second))
	defer k.Close()
	if err := k.Limiter("a").Close(); err != nil {
		t.Errorf("a tenant's Close() = %v, want nil", err)
	}
	if err := k.Limiter("b").Check(ctx); err != nil {
		t.Errorf("Check() after a tenant's Close = %v, want nil (not ErrClosed)", err)
	}
	if !k.Allow(ctx, "b") || k.Allow(ctx, "b") || k.Snapshot().State != StateShared {
		t.Errorf("after a tenant's Close: want true then false from Redis's bucket, state shared; state %s", k.Snapshot().State)
	}
}
