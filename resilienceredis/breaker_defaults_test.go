package resilienceredis

import (
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// The defaults BreakerConfig documents, through what they make the
// breaker do: NewBreaker(rdb, name) with no option. The breakers run in a
// testing/synctest bubble on a client whose script round trips are
// answered by the test (or fail): the clock is the bubble's.

// Threshold 0 means 5: the fifth consecutive failure of the instance
// holds its calls at once (the batch that trips the fleet is on its way).
func TestBreakerDefaultThreshold(t *testing.T) {
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(rdb.Client, "svc", nil)
		defer b.Close()
		for i := range 4 {
			if err := fail(b); err != nil {
				t.Fatalf("failure %d: %v, want admitted", i+1, err)
			}
		}
		if s := b.State(); s != breaker.Closed {
			t.Errorf("after 4 consecutive failures: State %v, want closed (Threshold 0 means 5)", s)
		}
		if err := fail(b); err != nil {
			t.Fatalf("failure 5: %v, want admitted", err)
		}
		if s := b.State(); s != breaker.Open {
			t.Errorf("after 5 consecutive failures: State %v, want open (Threshold 0 means 5)", s)
		}
		_, err := b.Allow()
		if got := openRetryAfter(t, err); got != 30*time.Second {
			t.Errorf("held after 5 failures: RetryAfter %v, want 30s (Cooldown 0 means 30s)", got)
		}
	})
}

// Prefix "" means "resilience:": the state's hash, and its channel, are
// "resilience:br:{name}".
func TestBreakerDefaultPrefix(t *testing.T) {
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(rdb.Client, "svc", nil)
		defer b.Close()
		b.sync()
		c, ok := rdb.last(readScript)
		if !ok {
			t.Fatal("no round trip reading the state")
		}
		const want = "resilience:br:{svc}"
		if len(c.keys) != 1 || c.keys[0] != want || len(c.args) == 0 || c.args[0] != want {
			t.Errorf("keys %q, channel %v: want the key and channel %q", c.keys, c.args[:min(1, len(c.args))], want)
		}
	})
}

// ProbeInterval 0 means 1s: while Redis is unreachable, the instance
// tries it again once a second, not at every tick of its flusher.
func TestBreakerDefaultProbeInterval(t *testing.T) {
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(rdb.Client, "svc", nil)
		defer b.Close()
		time.Sleep(time.Hour)
		b.sync() // fails: the instance decides alone
		b.tick() // tries Redis again: nothing was tried for an hour
		start, n := time.Now(), rdb.count(readScript)
		for _, at := range []time.Duration{0, time.Millisecond, time.Second / 2, time.Second - 1} {
			time.Sleep(time.Until(start.Add(at)))
			b.tick()
			if got := rdb.count(readScript); got != n {
				t.Fatalf("a tick %v after the last try: %d tries, want %d (ProbeInterval 0 means 1s)", at, got, n)
			}
		}
		time.Sleep(time.Until(start.Add(time.Second)))
		b.tick()
		if got := rdb.count(readScript); got != n+1 {
			t.Errorf("a tick 1s after the last try: %d tries, want %d", got, n+1)
		}
	})
}

// Before the instance learns the shared state, its view is of no
// generation: the snapshot's generation reads 0, and a batch counted then
// is sent for generation 0 (the script counts it in the current
// generation, if closed).
func TestBreakerStartsWithNoGeneration(t *testing.T) {
	rdb := newScripted(t, nil)
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(rdb.Client, "svc", nil)
		defer b.Close()
		if g := values(t, b.Snapshot())["generation"]; g != 0 {
			t.Errorf("before any round trip: generation %v, want 0", g)
		}
		if err := succeed(b); err != nil {
			t.Fatal(err)
		}
		b.flush()
		c, ok := rdb.last(flushScript)
		if !ok || len(c.args) < 8 {
			t.Fatalf("no batch sent: %v", c)
		}
		if g := fmt.Sprint(c.args[7]); g != "0" {
			t.Errorf("a batch counted before the state was learnt is sent for generation %s, want 0", g)
		}
	})
}

// answering replies to every script as a server whose state is closed,
// in generation 1 of epoch 7, would: the batch applied.
func answering(c scriptCall) (any, error) {
	return stateReply("7", 1, 0, 0, 1), nil
}

// MaxBatch 0 means 100: the flusher sends the batch at once when it holds
// 100 outcomes, not before (FlushInterval has not passed: the bubble's
// clock stands still).
func TestBreakerDefaultMaxBatch(t *testing.T) {
	rdb := newScripted(t, answering)
	synctest.Test(t, func(t *testing.T) {
		b := newBreaker(rdb.Client, "svc", nil)
		defer b.Close()
		b.wg.Add(1)
		go b.flushLoop()
		synctest.Wait() // the flusher read the state
		for i := range 99 {
			if err := succeed(b); err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
		}
		synctest.Wait()
		if n := rdb.count(flushScript); n != 0 {
			t.Fatalf("99 outcomes: %d batches sent, want none before FlushInterval (MaxBatch 0 means 100)", n)
		}
		succeed(b)
		synctest.Wait()
		if n := rdb.count(flushScript); n != 1 {
			t.Errorf("100 outcomes: %d batches sent, want 1 at once (MaxBatch 0 means 100)", n)
		}
	})
}
