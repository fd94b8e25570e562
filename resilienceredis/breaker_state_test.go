package resilienceredis

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
		a.flush()                            // generation 2, open
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

// The keys beside the state's hash are lost (deleted, evicted) while a
// trial is out: the fleet still admits at most MaxTrials trials at once
// (the trials out are kept in the state's hash).
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
	// Every key of the breaker but the state's hash is lost: the window,
	// the rules, and a trials key if there is one.
	rdb := newClient(t)
	keys, err := rdb.Keys(context.Background(), prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	lost := []string{stateKey(prefix) + ":trials"}
	for _, k := range keys {
		if k != stateKey(prefix) {
			lost = append(lost, k)
		}
	}
	if err := rdb.Del(context.Background(), lost...).Err(); err != nil {
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

// The hold of an instance's own trip lasts whatever the fleet's batch
// says (here the fleet's streak was broken by another instance's success,
// so the batch trips nothing), and ends after Cooldown of the instance's
// clock (moved by the test), when the instance counts afresh.
func TestBreakerLocalHoldOutlastsFleetAndEnds(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(3), WithCooldown(time.Minute))
	b := manual(t, addr, prefix, WithThreshold(3), WithCooldown(time.Minute))
	a.sync()
	b.sync()
	fail(a)
	a.flush()
	succeed(b)
	b.flush() // the fleet's streak is 0 again
	fail(a)
	a.flush()
	fail(a) // A's third failure in a row
	if err := succeed(a); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("A after 3 failures of its own in a row: %v, want ErrOpen", err)
	}
	a.flush()
	rdb := newClient(t)
	if got := sharedState(t, rdb, prefix); got["st"] != "0" || got["streak"] != "2" {
		t.Fatalf("the fleet: st %s streak %s, want closed, 2", got["st"], got["streak"])
	}
	a.sync()
	if err := succeed(a); !errors.Is(err, breaker.ErrOpen) {
		t.Errorf("A after its batch reached a fleet that did not trip: %v, want ErrOpen still", err)
	}
	if err := succeed(b); err != nil {
		t.Errorf("B: %v, want admitted (the hold is A's alone)", err)
	}
	a.skew.Store(int64(time.Minute)) // A's clock: the cooldown has passed
	if s := a.State(); s != breaker.Closed {
		t.Errorf("A after the cooldown: %v, want closed", s)
	}
	if err := fail(a); err != nil {
		t.Errorf("A after the cooldown: %v, want admitted", err)
	}
	if err := succeed(a); err != nil {
		t.Errorf("A after one failure more: %v, want admitted (it counts afresh)", err)
	}
}

// Instances that share a state with different rules learn it: each
// reports the other's rules (RulesMismatch, OnRulesMismatch); instances
// of the same rules report nothing; the report ends when the other rules
// have not been seen for three probe intervals.
func TestBreakerReportsRulesMismatch(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	same := manual(t, addr, prefix, WithThreshold(3))
	a := manual(t, addr, prefix, WithThreshold(3))
	a.sync()
	same.sync()
	if err := same.RulesMismatch(); err != nil {
		t.Errorf("two instances of the same rules: %v, want nil", err)
	}
	got := make(chan error, 4)
	b := running(t, addr, prefix, WithThreshold(4), WithCooldown(time.Minute), WithProbeInterval(time.Second),
		WithOnRulesMismatch(func(err error) { got <- err }))
	select {
	case err := <-got:
		if !errors.Is(err, ErrRulesMismatch) {
			t.Errorf("OnRulesMismatch got %v, want an error matching ErrRulesMismatch", err)
		}
		t.Logf("B: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("B, with Threshold 4, was not told of A's Threshold 3 within 5s")
	}
	a.sync()
	err := a.RulesMismatch()
	if !errors.Is(err, ErrRulesMismatch) {
		t.Fatalf("A after B used the state: %v, want ErrRulesMismatch", err)
	}
	want := `resilienceredis: instances share a breaker with different rules: breaker "svc": this instance's rules are [threshold=3 failureRatio=0 slowCallRatio=0 slowCall=0s window=10s buckets=10 minCalls=10 cooldown=30s trialTimeout=30s maxTrials=1 successThreshold=1], another instance's [threshold=4 failureRatio=0 slowCallRatio=0 slowCall=0s window=10s buckets=10 minCalls=10 cooldown=1m0s trialTimeout=1m0s maxTrials=1 successThreshold=1]`
	if err.Error() != want {
		t.Errorf("A's RulesMismatch mismatch:\n got %s\nwant %s", err, want)
	}
	b.Close() // B stops using the state
	// Three times (ProbeInterval 1s + FlushInterval 50ms) and more later,
	// by the server's clock as A sees it:
	a.shift.Store((4 * time.Second).Microseconds())
	a.sync()
	if err := a.RulesMismatch(); err != nil {
		t.Errorf("A once B's rules were not seen for 3 probe intervals: %v, want nil", err)
	}
}

// The flush fence checks the epoch: a batch counted for the right
// generation of another epoch is refused, and the same batch with the
// right epoch is applied.
func TestBreakerFenceChecksEpoch(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	a := manual(t, addr, prefix, WithThreshold(10))
	a.sync()
	rdb := newClient(t)
	gen, ep := viewGen(a.word.Load()), a.ep.Load()
	// One failure, as flush sends it (threshold 10, no ratio rules).
	batch := func(ep int64) int64 {
		st, err := a.call(context.Background(), flushScript, gen, ep, 0, 1, 0, 1, 1, 1, 10, 0.0, 0.0, 10, 1_000_000, 10)
		if err != nil {
			t.Fatal(err)
		}
		return st.verdict
	}
	if v := batch(ep + 1); v != 0 {
		t.Errorf("a batch with a stale epoch: verdict %d, want 0 (refused)", v)
	}
	if got := sharedState(t, rdb, prefix)["streak"]; got != "0" {
		t.Errorf("streak after the refused batch = %s, want 0", got)
	}
	if v := batch(ep); v != 1 {
		t.Errorf("the batch with the state's epoch: verdict %d, want 1 (applied)", v)
	}
	if got := sharedState(t, rdb, prefix)["streak"]; got != "1" {
		t.Errorf("streak after the applied batch = %s, want 1", got)
	}
}

// A bucket of the shared window is reset when the window comes round to
// it again, one window length later: the failures it held no longer
// count. One bucket short of a window length, they still do.
func TestBreakerWindowBucketResets(t *testing.T) {
	const window, buckets = 100 * time.Second, 10
	width := (window / buckets).Microseconds()
	for _, tc := range []struct {
		name  string
		later time.Duration
		trips bool
	}{
		{"one bucket short of a window length", window - window/buckets, true},
		{"one window length", window, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, prefix := redistest.Addr(t), testPrefix(t)
			a := manual(t, addr, prefix, WithThreshold(-1), WithFailureRatio(0.5), WithMinCalls(10),
				WithWindowDuration(window), WithWindowBuckets(buckets), WithCooldown(time.Hour))
			rdb := newClient(t)
			now, err := rdb.Time(context.Background()).Result()
			if err != nil {
				t.Fatal(err)
			}
			// Start 1s into a bucket (by the server's clock, shifted), so that
			// the test's own time never crosses into the next one.
			us := now.UnixMicro()
			shift := (us/width+1)*width - us + time.Second.Microseconds()
			a.shift.Store(shift)
			a.sync()
			for range 9 {
				fail(a)
			}
			a.flush() // 9 calls, below MinCalls
			if s := a.State(); s != breaker.Closed {
				t.Fatalf("9 failures, MinCalls 10: %v, want closed", s)
			}
			a.shift.Store(shift + tc.later.Microseconds())
			fail(a)
			a.flush()
			if open := a.State() == breaker.Open; open != tc.trips {
				t.Errorf("a 10th failure %v later: open %v, want %v", tc.later, open, tc.trips)
			}
			if !tc.trips {
				w, err := rdb.HGetAll(context.Background(), stateKey(prefix)).Result()
				if err != nil {
					t.Fatal(err)
				}
				var fails []string
				for k := range buckets {
					if f := w["wf"+strconv.Itoa(k)]; f != "" && f != "0" {
						fails = append(fails, "wf"+strconv.Itoa(k)+"="+f)
					}
				}
				if diff := cmp.Diff([]string{"wf" + strconv.Itoa(int((us+shift+tc.later.Microseconds())/width%buckets)) + "=1"}, fails); diff != "" {
					t.Errorf("window buckets' failures mismatch (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// A Reset drops what the instance counted and had not yet sent: its
// failure before the Reset never trips the new generation, whether the
// batch was still waiting (before) or taken by a flush whose send the
// fence refused (after the Reset, the re-send is not made).
func TestBreakerResetDropsUnsentOutcomes(t *testing.T) {
	for _, fresh := range []bool{true, false} {
		t.Run("fresh="+strconv.FormatBool(fresh), func(t *testing.T) {
			addr, prefix := redistest.Addr(t), testPrefix(t)
			a := manual(t, addr, prefix, WithThreshold(1), WithCooldown(time.Hour))
			if !fresh {
				a.sync() // the view has learnt the state: generation > 0
			}
			if err := fail(a); err != nil {
				t.Fatalf("failure refused: %v", err)
			}
			if err := a.Reset(context.Background()); err != nil {
				t.Fatal(err)
			}
			a.flush()
			rdb := newClient(t)
			if got := sharedState(t, rdb, prefix); got["st"] != "0" {
				t.Errorf("after Reset and a flush: shared st %s streak %s, want closed", got["st"], got["streak"])
			}
			if s := a.State(); s != breaker.Closed {
				t.Errorf("instance: %v, want closed", s)
			}
		})
	}
}

// Shared reads the state as Redis holds it: nothing before the state is
// made, then the counts of the batches applied, then the trip's new
// generation with its counts cleared; it changes nothing.
func TestBreakerShared(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	ctx := ctxFor(t)
	a := manual(t, addr, prefix, WithThreshold(3), WithCooldown(time.Hour), WithWindowDuration(time.Minute))
	if got, err := a.Shared(ctx); err != nil || got != (SharedState{}) {
		t.Fatalf("Shared before any script: %+v, %v; want the zero SharedState", got, err)
	}
	a.sync()
	ep := a.ep.Load()
	succeed(a)
	fail(a)
	succeed(a)
	fail(a)
	fail(a)
	a.flush()
	got, err := a.Shared(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := SharedState{Exists: true, Epoch: ep, Generation: 1, State: breaker.Closed, ConsecutiveFailures: 2, Successes: 2, Failures: 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Shared after 2 successes and 3 failures mismatch (-want +got):\n%s", diff)
	}
	fail(a)
	a.flush() // the third failure in a row trips
	got, err = a.Shared(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want = SharedState{Exists: true, Epoch: ep, Generation: 2, State: breaker.Open}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Shared after the trip mismatch (-want +got):\n%s", diff)
	}
	a.shift.Store(time.Hour.Microseconds()) // the cooldown has passed: Shared does not make it half-open
	if got, _ := a.Shared(ctx); got.State != breaker.Open || got.Generation != 2 {
		t.Errorf("Shared after the cooldown: %v generation %d, want open, 2 (Shared writes nothing)", got.State, got.Generation)
	}
	a.sync() // the read makes it half-open
	p, err := a.Allow()
	if err != nil || p.member == "" {
		t.Fatalf("a call after the cooldown: %v, want a trial", err)
	}
	want = SharedState{Exists: true, Epoch: ep, Generation: 3, State: breaker.HalfOpen, TrialsOut: 1}
	if got, _ := a.Shared(ctx); !cmp.Equal(want, got) {
		t.Errorf("Shared with a trial out mismatch (-want +got):\n%s", cmp.Diff(want, got))
	}
	p.Done(nil)
}

// Shared counts the shared window as the instance's rules read it, by the
// server's clock: the outcomes of a bucket still within WindowDuration
// count, and once the window has passed over them they count no more
// (the run of failures, which does not decay, stays).
func TestBreakerSharedWindowAgesOut(t *testing.T) {
	addr, prefix := redistest.Addr(t), testPrefix(t)
	ctx := ctxFor(t)
	// A window of a minute in 10 buckets of 6s.
	a := manual(t, addr, prefix, WithThreshold(100), WithCooldown(time.Hour), WithWindowDuration(time.Minute),
		WithWindowBuckets(10), WithSlowCall(time.Millisecond))
	a.sync()
	succeed(a)
	p, err := a.Allow()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Millisecond) // the call takes longer than SlowCall
	p.Done(nil)
	fail(a)
	fail(a)
	a.flush()
	for _, c := range []struct {
		shift time.Duration
		want  [3]int64 // successes, failures, slow calls
	}{
		{0, [3]int64{2, 2, 1}},
		{30 * time.Second, [3]int64{2, 2, 1}},
		// 10 buckets later the window has passed over the outcomes' bucket.
		{time.Minute, [3]int64{0, 0, 0}},
		{2 * time.Minute, [3]int64{0, 0, 0}},
	} {
		a.shift.Store(c.shift.Microseconds())
		got, err := a.Shared(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, [3]int64{got.Successes, got.Failures, got.SlowCalls}); diff != "" || got.ConsecutiveFailures != 2 {
			t.Errorf("Shared %v later: streak %d (want 2); window counts mismatch (-want +got):\n%s", c.shift, got.ConsecutiveFailures, diff)
		}
	}
}
