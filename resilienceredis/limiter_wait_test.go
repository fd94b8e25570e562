package resilienceredis

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

// WaitN(ctx, 0) asks nothing and takes nothing: nil, or ctx.Err() when
// ctx is done; it does not panic.
func TestLimiterWaitNZero(t *testing.T) {
	l := NewLimiter(newClient(t), "waitzero", slow, 1, WithPrefix(testPrefix(t)))
	if err := l.WaitN(ctxFor(t), 0); err != nil {
		t.Errorf("WaitN(ctx, 0) = %v, want nil", err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.WaitN(done, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitN(done ctx, 0) = %v, want context.Canceled", err)
	}
	if s := values(t, l.Snapshot()); s["decisions_shared"] != 0 {
		t.Errorf("WaitN(ctx, 0) made %v decisions in Redis, want 0", s["decisions_shared"])
	}
	if !l.Allow(ctxFor(t)) {
		t.Error("WaitN(ctx, 0) took the token")
	}
}

// A MaxWait of 1ns refuses any wait at all (the next token 5s away),
// and the snapshot counts the Waits Redis decided and the refusal.
func TestLimiterWaitShortestMaxWait(t *testing.T) {
	ctx := context.Background() // no deadline: MaxWait alone bounds the wait
	l := NewLimiter(newClient(t), "waitmax", 0.2, 1, WithPrefix(testPrefix(t)), WithMaxWait(time.Nanosecond), WithTimeout(5*time.Second))
	if err := l.Wait(ctx); err != nil {
		t.Fatalf("Wait on a full bucket: %v", err)
	}
	err := l.Wait(ctx)
	var re *resilience.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, ratelimit.ErrLimited) {
		t.Errorf("Wait with MaxWait 1ns on an empty bucket: %v; want a refusal at once", err)
	}
	s := l.Snapshot()
	if diff := cmp.Diff(map[string]float64{"local": 0, "decisions_shared": 2, "decisions_local": 0}, values(t, s)); diff != "" || s.Refused != 1 {
		t.Errorf("Snapshot refused %d, want 1; values mismatch (-want +got):\n%s", s.Refused, diff)
	}
}

// A cancelled WaitN(ctx, 2) gives back both its tokens.
func TestLimiterWaitNCancelledGivesBackAll(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	prefix := testPrefix(t)
	l := NewLimiter(rdb, "refund2", 1, 2, WithPrefix(prefix), WithTimeout(5*time.Second)) // T = 1s; the refund waits for its answer
	key := prefix + "rl:{refund2}:1/2"
	if !l.AllowN(ctx, 2) {
		t.Fatal("first AllowN(2) refused")
	}
	before, err := rdb.Get(ctx, key).Float64()
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- l.WaitN(wctx, 2) }()
	redistest.Eventually(t, 5*time.Second, "the WaitN reserves its tokens", func() (bool, string) {
		v, err := rdb.Get(ctx, key).Float64()
		return err == nil && v > before, "TAT " + strconv.FormatFloat(v, 'f', -1, 64)
	})
	cancel()
	wantGivenBack(t, rdb, key, before, done, "the cancelled WaitN(2)")
}

// A WaitN(ctx, 2) cancelled while Redis reserves its tokens (the script
// has run, its answer is on its way) gives both back too. The stand-in
// for the round trip gives up when its context ends, as a client with
// ContextTimeoutEnabled does; it ends only after the cancellation.
func TestLimiterWaitNCancelledDuringItsRoundTripGivesBackAll(t *testing.T) {
	ctx := ctxFor(t)
	rdb := newClient(t)
	prefix := testPrefix(t)
	var armed atomic.Bool
	ran := make(chan struct{})
	release := make(chan struct{})
	rdb.AddHook(evalHook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
		err := next(ctx, cmd)
		if err != nil || !armed.CompareAndSwap(true, false) {
			return err
		}
		close(ran)
		<-release
		return ctx.Err() // the answer is lost if the round trip's context ended
	}))
	l := NewLimiter(rdb, "refundrt", 1, 2, WithPrefix(prefix), WithTimeout(5*time.Second))
	key := prefix + "rl:{refundrt}:1/2"
	if !l.AllowN(ctx, 2) {
		t.Fatal("first AllowN(2) refused")
	}
	before, err := rdb.Get(ctx, key).Float64()
	if err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- l.WaitN(wctx, 2) }()
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("WaitN's reservation did not run within 5s")
	}
	cancel()
	close(release)
	wantGivenBack(t, rdb, key, before, done, "the WaitN(2) cancelled during its round trip")
}

// wantGivenBack checks that the cancelled Wait (or WaitN) named what
// returns context.Canceled on done within 10s, and that the TAT at key is
// then before again: its tokens are given back.
func wantGivenBack(t *testing.T, rdb *redis.Client, key string, before float64, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v, want context.Canceled", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return within 10s of its cancellation", what)
	}
	after, err := rdb.Get(ctxFor(t), key).Float64()
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("TAT after %s = %v, want %v (its tokens given back)", what, after, before)
	}
}
