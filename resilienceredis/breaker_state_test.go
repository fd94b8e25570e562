package resilienceredis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
)

// stateKey is the key of the shared state of the breaker named svc.
func stateKey(prefix string) string { return prefix + "br:{svc}" }

// The shared state vanishes without any instance seeing a Redis error
// (DEL here; FLUSHALL, an eviction or a restart without persistence
// between two round trips do the same): the first script to run creates
// it again, in a new epoch, and the fleet counts again at once: the batch
// fenced by the new epoch is counted again in the new state.
func TestBreakerCountsAgainAfterStateVanishes(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(3), WithCooldown(time.Hour))
	b := manual(t, addr, prefix, WithThreshold(3), WithCooldown(time.Hour))
	a.sync()
	b.sync()
	rdb := newClient(t)
	if err := rdb.Del(context.Background(), stateKey(prefix)).Err(); err != nil {
		t.Fatal(err)
	}
	for i, x := range []*Breaker{a, b, a} {
		if err := fail(x); err != nil {
			t.Fatalf("failure %d refused: %v", i, err)
		}
		x.flush()
	}
	if got := sharedState(t, rdb, prefix); got["st"] != "1" {
		t.Fatalf("3 failures (Threshold 3) after the state vanished: shared st %s streak %s, want open", got["st"], got["streak"])
	}
	for i, x := range []*Breaker{a, b} {
		x.sync()
		if s := x.State(); s != breaker.Open {
			t.Errorf("instance %d: %v, want open", i, s)
		}
	}
}

// The same on a running fleet whose server loses every key (FLUSHALL):
// the instances count again at once, and 100 consecutive failures trip
// the breaker well before they are all made.
func TestBreakerTripsAfterFlushAll(t *testing.T) {
	s := redistest.Start(t)
	prefix := testPrefix(t)
	a := running(t, s.Addr, prefix, faultOpts(WithThreshold(3), WithCooldown(time.Hour))...)
	b := running(t, s.Addr, prefix, faultOpts(WithThreshold(3), WithCooldown(time.Hour))...)
	learnt(t, a, b)
	rdb := clientOf(t, s.Addr)
	if err := rdb.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for i := range 100 {
		x := []*Breaker{a, b}[i%2]
		if fail(x) == nil {
			admitted++
		}
		if i%3 == 2 {
			time.Sleep(10 * time.Millisecond) // one flush interval every 3 failures
		}
	}
	redistest.Eventually(t, 5*time.Second, "the fleet trips", func() (bool, string) {
		st := sharedState(t, rdb, prefix)
		return st["st"] == "1" && a.State() == breaker.Open && b.State() == breaker.Open, "shared st " + st["st"] + " streak " + st["streak"]
	})
	if admitted > 30 {
		t.Errorf("%d of 100 consecutive failing calls were admitted after FLUSHALL (Threshold 3, 3 per flush interval), want the trip within a few flush intervals", admitted)
	}
	t.Logf("after FLUSHALL: %d of 100 failing calls admitted", admitted)
}

// The shared state goes back in time (a restart from an older snapshot,
// a failover to a replica that was behind): the instances take the older
// state as they find it, and count in it. Batches counted in the lost
// generations are counted again in the older state, which is closed.
func TestBreakerAdoptsOlderState(t *testing.T) {
	ctx := context.Background()
	rdb := newClient(t)
	t.Run("batches fenced by the older state count again", func(t *testing.T) {
		addr, prefix := redistest.Addr(t), testPrefix(t)
		a := manual(t, addr, prefix, WithThreshold(2), WithCooldown(time.Hour))
		b := manual(t, addr, prefix, WithThreshold(2), WithCooldown(time.Hour))
		a.sync()
		b.sync()
		snap, err := rdb.Dump(ctx, stateKey(prefix)).Result() // generation 1, closed
		if err != nil {
			t.Fatal(err)
		}
		fail(a)
		fail(a)
		a.flush() // generation 2, open
		if err := b.Reset(ctx); err != nil { // generation 3, closed
			t.Fatal(err)
		}
		a.sync()
		if err := fail(a); err != nil { // in A's batch, for generation 3
			t.Fatal(err)
		}
		if err := rdb.RestoreReplace(ctx, stateKey(prefix), 0, snap).Err(); err != nil {
			t.Fatal(err)
		}
		a.flush()
		if err := fail(b); err != nil {
			t.Fatal(err)
		}
		b.flush()
		got := sharedState(t, rdb, prefix)
		if got["st"] != "1" || got["gen"] != "2" {
			t.Errorf("2 failures counted for generation 3, state back at generation 1: gen %s st %s streak %s, want gen 2, open", got["gen"], got["st"], got["streak"])
		}
	})
	t.Run("an open instance takes the older closed state", func(t *testing.T) {
		addr, prefix := redistest.Addr(t), testPrefix(t)
		a := manual(t, addr, prefix, WithThreshold(1), WithCooldown(time.Hour))
		a.sync()
		snap, err := rdb.Dump(ctx, stateKey(prefix)).Result() // generation 1, closed
		if err != nil {
			t.Fatal(err)
		}
		fail(a)
		a.flush() // generation 2, open for an hour
		if s := a.State(); s != breaker.Open {
			t.Fatalf("after the trip: %v, want open", s)
		}
		if err := rdb.RestoreReplace(ctx, stateKey(prefix), 0, snap).Err(); err != nil {
			t.Fatal(err)
		}
		a.sync()
		if s := a.State(); s != breaker.Closed {
			t.Fatalf("after reading the older state: %v, want closed (the shared state)", s)
		}
		if err := fail(a); err != nil {
			t.Fatalf("a call after taking the closed state: %v, want admitted", err)
		}
		a.flush()
		if got := sharedState(t, rdb, prefix); got["st"] != "1" || got["gen"] != "2" {
			t.Errorf("a failure in the older state (Threshold 1): gen %s st %s, want gen 2, open", got["gen"], got["st"])
		}
	})
}

// Two instances just started, Threshold 2: A is admitted, B fails, A
// learns the shared state, A's call fails: both failures count. A view
// refresh is not a new generation.
func TestBreakerKeepsOutcomesAcrossFirstRead(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(2), WithCooldown(time.Hour))
	b := manual(t, addr, prefix, WithThreshold(2), WithCooldown(time.Hour))
	p, err := a.Allow()
	if err != nil {
		t.Fatal(err)
	}
	if err := fail(b); err != nil {
		t.Fatal(err)
	}
	b.flush()
	a.sync() // A's first read of the shared state
	p.Done(errBoom)
	a.flush()
	if got := sharedState(t, newClient(t), prefix); got["st"] != "1" {
		t.Errorf("A admitted, B fails, A fails (Threshold 2): st %s streak %s, want open", got["st"], got["streak"])
	}

	// The same with outcomes already in A's batch when A first reads.
	prefix = testPrefix(t)
	a = manual(t, addr, prefix, WithThreshold(2), WithCooldown(time.Hour))
	b = manual(t, addr, prefix, WithThreshold(2), WithCooldown(time.Hour))
	b.sync()
	fail(a) // in A's batch, counted for the generation it has not learnt
	a.sync()
	fail(b)
	b.flush()
	a.flush()
	if got := sharedState(t, newClient(t), prefix); got["st"] != "1" {
		t.Errorf("A fails, A reads, B fails (Threshold 2): st %s streak %s, want open", got["st"], got["streak"])
	}
}

// The trials key is lost (deleted, evicted) while a trial is out: the
// fleet still admits at most MaxTrials trials at once.
func TestBreakerMaxTrialsHoldsWhenTrialsKeyLost(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	opts := []BreakerOption{WithThreshold(1), WithCooldown(time.Hour), WithMaxTrials(1)}
	a := manual(t, addr, prefix, opts...)
	b := manual(t, addr, prefix, opts...)
	a.sync()
	fail(a)
	a.flush()
	for _, x := range []*Breaker{a, b} {
		x.shift.Store(time.Hour.Microseconds())
		x.sync()
	}
	p, err := a.Allow()
	if err != nil || p.member == "" {
		t.Fatalf("first call after the cooldown: %v; want a trial", err)
	}
	rdb := newClient(t)
	if err := rdb.Del(context.Background(), stateKey(prefix)+":trials").Err(); err != nil {
		t.Fatal(err)
	}
	if q, err := b.Allow(); !errors.Is(err, breaker.ErrTooManyTrials) {
		t.Errorf("a second trial while one is out (MaxTrials 1), trials key lost: %v (trial %q), want ErrTooManyTrials", err, q.member)
	}
	p.Done(nil)
	a.sendReport(<-a.reports)
	a.sync()
	if s := a.State(); s != breaker.Closed {
		t.Errorf("after the trial's success: %v, want closed", s)
	}
}

// An instance that alone sees Threshold consecutive failures stops
// calling at once, before its batch reaches Redis: this instance has no
// flusher, so no flush interval ever ends.
func TestBreakerTripsLocallyWithinFlushWindow(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(3), WithCooldown(time.Hour))
	a.sync()
	var errs []error
	for range 7 {
		errs = append(errs, fail(a))
	}
	for i, err := range errs {
		if i < 3 && err != nil {
			t.Errorf("call %d: %v, want admitted", i, err)
		}
		var re interface{ RetryAfter() time.Duration }
		if i >= 3 && (!errors.Is(err, breaker.ErrOpen) || !errors.As(err, &re) || re.RetryAfter() < 59*time.Minute) {
			t.Errorf("call %d, after 3 consecutive failures (Threshold 3) not yet sent: %v, want ErrOpen for about the cooldown", i, err)
		}
	}
	if s := a.State(); s != breaker.Open {
		t.Errorf("state after the local trip: %v, want open", s)
	}
	a.flush()
	if got := sharedState(t, newClient(t), prefix); got["st"] != "1" {
		t.Errorf("the batch of the 3 failures: shared st %s, want open", got["st"])
	}
}
