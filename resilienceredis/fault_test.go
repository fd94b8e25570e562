package resilienceredis

import (
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The bounds of the fault tests. The contract is that no call waits on
// Redis longer than Timeout; the tests give Timeout faultTimeout, long
// enough that a server that is not stalled always answers within it, even
// on a loaded CI machine (round trips of the scripts under -race at load
// average 10: 99.9th percentile 48ms, slowest 70ms; a slower one would
// make the instance decide alone where the test needs Redis). A call is
// checked against faultTimeout plus faultMargin, the scheduling delay a
// loaded machine may add; a call that waited on a stalled server beyond
// Timeout would wait for the fault clients' own timeouts (30s,
// stallClient) or for the end of the stall, far beyond that bound.
const (
	faultTimeout = time.Second
	faultMargin  = 2 * time.Second
)

// faultOpts are the fault tests' bounds: faultTimeout, and short flush
// and probe intervals, so that the faults show within a test.
func faultOpts(more ...BreakerOption) []BreakerOption {
	return append([]BreakerOption{
		WithTimeout(faultTimeout), WithFlushInterval(10 * time.Millisecond), WithProbeInterval(100 * time.Millisecond),
	}, more...)
}

// stallClient returns a client of the server at addr, closed when t ends,
// whose own timeouts (30s) are far beyond faultTimeout plus faultMargin:
// a wait on a stalled server that Timeout did not bound shows as a call
// slower than the bound, not as the client's timeout. The round trips a
// stalled server holds end when it continues (or is killed).
func stallClient(t testing.TB, addr string, ctxTimeouts bool) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: addr, MaxRetries: -1,
		DialTimeout: 30 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		PoolTimeout: 30 * time.Second, ContextTimeoutEnabled: ctxTimeouts,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// runningStall is running on a stallClient.
func runningStall(t *testing.T, addr, prefix string, opts ...BreakerOption) *Breaker {
	t.Helper()
	opts = append([]BreakerOption{WithPrefix(prefix)}, opts...)
	b := NewBreaker(stallClient(t, addr, false), "svc", opts...)
	t.Cleanup(func() { b.Close() })
	return b
}

func learnt(t *testing.T, bs ...*Breaker) {
	t.Helper()
	for _, b := range bs {
		redistest.Eventually(t, 5*time.Second, "the instance learns the shared state", func() (bool, string) {
			return b.ep.Load() != 0 && !viewDown(b.word.Load()), "not yet"
		})
	}
}

// timed runs f and fails t if it took longer than a call may wait on
// Redis: faultTimeout, plus faultMargin for the machine's scheduling.
func timed(t *testing.T, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	if d := time.Since(start); d > faultTimeout+faultMargin {
		t.Errorf("%s took %v, want at most the %v Timeout (%v with the margin of a loaded machine)", what, d, faultTimeout, faultTimeout+faultMargin)
	}
}

// The server stalls (SIGSTOP) mid-run: no call waits on it beyond the
// timeout; the instances decide with their local breakers (A trips
// locally on its own failures); when the server continues they take the
// shared state again. What the stall lost: the outcomes of the stall,
// and A's refusals, which the fleet never saw. A's first failure of the
// stall is its third in a row (Threshold 3), so A holds its calls for its
// Cooldown whatever the fleet makes of its batch: if that batch never
// reached the server (it was dropped when A found the server
// unreachable), the fleet stays closed while A holds.
func TestFaultStall(t *testing.T) {
	s := redistest.Start(t)
	prefix := testPrefix(t)
	a := runningStall(t, s.Addr, prefix, faultOpts(WithThreshold(3), WithCooldown(time.Hour))...)
	b := runningStall(t, s.Addr, prefix, faultOpts(WithThreshold(3), WithCooldown(time.Hour))...)
	learnt(t, a, b)
	rdb := clientOf(t, s.Addr)
	fail(a)
	fail(a)
	redistest.Eventually(t, 5*time.Second, "two failures reach Redis", func() (bool, string) {
		st := sharedState(t, rdb, prefix)["streak"]
		return st == "2", "streak " + st
	})

	s.Pause(t)
	stalled := time.Now()
	var errs []error
	held := false
	// A finds the server unreachable when a round trip has waited Timeout:
	// calls go on until then, for at most 20s and 2000 turns.
	for i := 0; i < 2000 && time.Since(stalled) < 20*time.Second; i++ {
		timed(t, "a call on A while the server is stalled", func() { errs = append(errs, fail(a)) })
		timed(t, "a call on B while the server is stalled", func() { succeed(b) })
		if i == 0 {
			// A's third failure in a row: A holds its calls, unless it
			// found the server unreachable first (the machine stalled
			// the test for Timeout), and then its local breaker decides.
			held = viewHeld(a.word.Load())
			continue
		}
		if viewDown(a.word.Load()) && errors.Is(errs[len(errs)-1], breaker.ErrOpen) {
			break
		}
		time.Sleep(10 * time.Millisecond) // calls spread over the stall, as traffic would be
	}
	if !viewDown(a.word.Load()) {
		t.Fatal("A did not find the stalled server unreachable")
	}
	if !errors.Is(errs[len(errs)-1], breaker.ErrOpen) {
		t.Fatalf("A did not refuse its calls after its own failures during the stall: last error %v", errs[len(errs)-1])
	}
	t.Logf("stall: A decided locally and refused its calls on its own failures (held %v) %v after the stall began", held, time.Since(stalled))
	if s := b.State(); s != breaker.Closed {
		t.Errorf("B during the stall: %v, want closed (its own calls succeed)", s)
	}

	s.Resume(t)
	resumed := time.Now()
	// The batches A sent as the stall began were queued on their
	// connections: the server runs them when it continues, so the fleet
	// may count those failures late (and trip on them). Either way, both
	// instances end on the shared state. The state is read once no round
	// trip of A or B is out: every batch of the stall has then run (or
	// was never sent).
	var final map[string]string
	redistest.Eventually(t, 10*time.Second, "A and B take the shared state again", func() (bool, string) {
		for i, x := range []*Breaker{a, b} {
			st := x.rem.rdb.(*redis.Client).PoolStats()
			if st.TotalConns != st.IdleConns {
				return false, "instance " + strconv.Itoa(i) + " has a round trip out"
			}
		}
		final = sharedState(t, rdb, prefix)
		g := final["gen"]
		ga, gb := strconv.FormatUint(viewGen(a.word.Load()), 10), strconv.FormatUint(viewGen(b.word.Load()), 10)
		ok := !viewDown(a.word.Load()) && !viewDown(b.word.Load()) && ga == g && gb == g
		return ok, "shared gen " + g + ", A " + ga + ", B " + gb
	})
	t.Logf("stall: A and B back on the shared state (gen %s, st %s) %v after the server continued", final["gen"], final["st"], time.Since(resumed))
	want := breaker.Closed
	if final["st"] == "1" {
		want = breaker.Open
	}
	if s := b.State(); s != want {
		t.Errorf("B after the stall: %v, want the shared state, %v", s, want)
	}
	switch s := a.State(); {
	case held && want == breaker.Closed:
		// The batch of A's third failure never ran: A holds its calls.
		if s != breaker.Open || !viewHeld(a.word.Load()) {
			t.Errorf("A after the stall, the fleet closed: %v (held %v), want open: A holds its calls for its Cooldown", s, viewHeld(a.word.Load()))
		}
	case s != want:
		t.Errorf("A after the stall: %v, want the shared state, %v", s, want)
	}
}

// The server crashes (SIGKILL) while the fleet's breaker is open, and
// restarts empty: the instances keep the cooldown they knew while it is
// down, and then take the new, closed state (a new epoch): a crash of a
// server without persistence loses the shared state.
func TestFaultCrashAndRestart(t *testing.T) {
	s := redistest.Start(t)
	prefix := testPrefix(t)
	a := running(t, s.Addr, prefix, faultOpts(WithThreshold(1), WithCooldown(time.Hour))...)
	b := running(t, s.Addr, prefix, faultOpts(WithThreshold(1), WithCooldown(time.Hour))...)
	lim := NewLimiter(clientOf(t, s.Addr), "crash", 1, 1, WithPrefix(prefix), WithTimeout(50*time.Millisecond), WithFallback(math.Inf(1), 0))
	learnt(t, a, b)
	ep := a.ep.Load()
	fail(a)
	redistest.Eventually(t, 5*time.Second, "B sees A's trip", func() (bool, string) {
		return b.State() == breaker.Open, b.State().String()
	})

	s.Kill(t)
	for range 5 {
		timed(t, "a call on B while the server is down", func() {
			if err := succeed(b); !errors.Is(err, breaker.ErrOpen) {
				t.Errorf("B while the server is down: %v, want ErrOpen (the cooldown it knew)", err)
			}
		})
		timed(t, "a limiter decision while the server is down", func() { lim.Allow(ctxFor(t)) })
	}
	redistest.Eventually(t, 5*time.Second, "B finds the server down", func() (bool, string) {
		return viewDown(b.word.Load()), "not yet"
	})

	s.Restart(t)
	restarted := time.Now()
	for _, x := range []*Breaker{a, b} {
		redistest.Eventually(t, 10*time.Second, "the instances take the new state", func() (bool, string) {
			return !viewDown(x.word.Load()) && x.ep.Load() != ep && x.State() == breaker.Closed, x.State().String()
		})
	}
	t.Logf("crash: both instances on the restarted server's new state %v after the restart", time.Since(restarted))
	if err := succeed(b); err != nil {
		t.Errorf("B after the restart: %v, want admitted", err)
	}
}

// A call that would be a half-open trial is the one call that asks Redis:
// with the server stalled it waits at most Timeout, then the local breaker
// decides.
func TestFaultStallDuringHalfOpen(t *testing.T) {
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run("ContextTimeoutEnabled="+strconv.FormatBool(ctxTimeouts), func(t *testing.T) {
			s := redistest.Start(t)
			b := newBreaker(stallClient(t, s.Addr, ctxTimeouts), "svc", faultOpts(WithPrefix(testPrefix(t)), WithThreshold(1), WithCooldown(time.Minute)))
			defer b.Close()
			b.sync()
			fail(b)
			b.flush()
			b.shift.Store(time.Minute.Microseconds())
			b.sync()
			if st := b.State(); st != breaker.HalfOpen {
				t.Fatalf("after the cooldown: %v, want half-open", st)
			}
			s.Pause(t)
			var err error
			timed(t, "a trial call while the server is stalled", func() { err = succeed(b) })
			if err != nil {
				t.Errorf("the local breaker (fresh) refused: %v", err)
			}
			if !viewDown(b.word.Load()) {
				t.Error("the instance did not go local")
			}
			s.Resume(t)
		})
	}
}
