package resilienceredis

import (
	"context"
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/eventlog"
	"github.com/google/go-cmp/cmp"
)

var errBrFake = errors.New("fake: Redis down")

// dropped is b's snapshot value outcomes_dropped.
func brDropped(t *testing.T, b *Breaker) float64 {
	t.Helper()
	return values(t, b.Snapshot())["outcomes_dropped"]
}

// Outcomes of an older generation are dropped and counted so
// (outcomes_dropped): a permit of generation 1 that reports once the
// view has learnt generation 2 adds nothing to the batch; a batch counted
// for generation 1 is dropped whole when a call of generation 2 reports.
func TestBreakerDropsOutcomesOfOlderGeneration(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(10))
	b.sync()
	p, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	fail(b)
	fail(b) // two outcomes in the batch, for generation 1
	f.set(func(string, []any) ([]any, error) { return brReply(7, 2, 0, 0, 1), nil })
	b.sync() // another instance's Reset: generation 2, closed
	p.Done(errBoom)
	if got := brDropped(t, b); got != 1 || b.batch.n != 2 {
		t.Errorf("a permit of generation 1 reported in generation 2: %v dropped, batch of %d; want 1 dropped, the batch of 2 as it was", got, b.batch.n)
	}
	succeed(b) // a call of generation 2: the batch of generation 1 goes
	if got := brDropped(t, b); got != 3 || b.batch.n != 1 || b.batch.fail != 0 {
		t.Errorf("a call of generation 2 reported: %v dropped, batch of %d (%d failures); want 3 dropped, a batch of 1 success", got, b.batch.n, b.batch.fail)
	}
}

// A round trip that fails drops the batch (the instance decides alone):
// the outcomes are counted as dropped, and are not sent when Redis
// answers again. A flush that fails drops its own outcomes, and the
// instance then decides alone (BreakerLocal).
func TestBreakerFailedRoundTripDropsBatch(t *testing.T) {
	var rec eventlog.Recorder
	b, f := brFakeBreaker(t, WithThreshold(10), WithObserver(&rec))
	b.sync()
	fail(b)
	fail(b)
	ok := func(string, []any) ([]any, error) { return brReply(7, 1, 0, 0, 1), nil }
	f.set(func(string, []any) ([]any, error) { return nil, errBrFake })
	b.sync() // fails: the instance decides alone
	if got := brDropped(t, b); got != 2 {
		t.Errorf("outcomes dropped when the instance went local: %v, want 2", got)
	}
	f.set(ok)
	b.sync() // Redis answers again
	if values(t, b.Snapshot())["local"] != 0 {
		t.Fatal("the instance is still local after Redis answered")
	}
	before := len(f.runs())
	if b.flush() {
		t.Errorf("flush after the batch was dropped sent %v", f.runs()[before:])
	}

	// A flush that fails.
	fail(b)
	fail(b)
	fail(b)
	f.set(func(string, []any) ([]any, error) { return nil, errBrFake })
	b.flush()
	if got := brDropped(t, b); got != 5 {
		t.Errorf("outcomes dropped after a failed flush of 3: %v, want 5", got)
	}
	if values(t, b.Snapshot())["local"] != 1 {
		t.Errorf("after a failed flush the instance does not decide alone")
	}
	if got := localEvents(&rec, BreakerLocal); len(got) != 2 {
		t.Errorf("BreakerLocal events %q, want 2 (one for each failed round trip that made the instance local)", got)
	}
}

// Reset and Close drop the outcomes not yet sent, and count them so.
func TestBreakerResetAndCloseCountDropped(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(10))
	b.sync()
	fail(b)
	succeed(b)
	f.set(func(string, []any) ([]any, error) { return brReply(7, 2, 0, 0, 0), nil })
	if err := b.Reset(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := brDropped(t, b); got != 2 {
		t.Errorf("outcomes dropped by Reset: %v, want 2", got)
	}
	fail(b)
	fail(b)
	fail(b)
	b.Close()
	if got := brDropped(t, b); got != 5 {
		t.Errorf("outcomes dropped by Reset (2) and Close (3): %v, want 5", got)
	}
	if diff := cmp.Diff([]string{"read", "reset"}, f.runs()); diff != "" {
		t.Errorf("scripts run mismatch (-want +got):\n%s", diff)
	}
}

// A reply that is not a script's (of another shape) is a failed round
// trip: the instance decides alone.
func TestBreakerMalformedReplyGoesLocal(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(10))
	f.set(func(string, []any) ([]any, error) {
		return []any{int64(7), int64(1), int64(0), int64(0), int64(1)}, nil
	})
	b.sync()
	if values(t, b.Snapshot())["local"] != 1 {
		t.Errorf("after a reply of 5 values the instance does not decide alone")
	}
}
