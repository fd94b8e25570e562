package resilienceredis

import (
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// generation is b's snapshot value generation: the shared state's
// generation as the instance knows it.
func brGeneration(t *testing.T, b *Breaker) float64 {
	t.Helper()
	return values(t, b.Snapshot())["generation"]
}

// during makes fake reply state to its next round trip, after running
// f while that round trip is in flight, and every later one alike
// without f.
func brDuring(fk *brFake, f func(), state []any) {
	ran := false
	fk.set(func(string, []any) ([]any, error) {
		if !ran {
			ran = true
			f()
		}
		return state, nil
	})
}

// A published state never ends a decision alone (only a reply of Redis
// does): the instance takes it as its view and stays local; the reply to
// its next round trip ends it. The published epoch is the view's.
func TestBreakerPublishedStateKeepsLocal(t *testing.T) {
	b, f := brFakeBreaker(t, WithThreshold(10))
	b.sync()
	f.set(func(string, []any) ([]any, error) { return nil, errBrFake })
	b.sync() // the instance decides alone
	local := func() float64 { return values(t, b.Snapshot())["local"] }
	b.receive("7 1 0 0") // the state it knows, published
	if local() != 1 {
		t.Errorf("the state the instance knew, published: it no longer decides alone")
	}
	b.receive("7 2 1 3600000000") // the fleet tripped: open for an hour
	if local() != 1 || brGeneration(t, b) != 2 || b.ep.Load() != 7 {
		t.Errorf("a newer state published: local %v, generation %v, epoch %d; want local 1, generation 2, epoch 7", local(), brGeneration(t, b), b.ep.Load())
	}
	if s := b.State(); s != breaker.Open {
		t.Errorf("State with the published cooldown of an hour: %v, want open", s)
	}
	f.set(func(string, []any) ([]any, error) { return brReply(7, 3, 0, 0, 0), nil })
	b.sync() // Redis answers, with a newer state
	if local() != 0 || brGeneration(t, b) != 3 {
		t.Errorf("a reply of generation 3: local %v, generation %v; want 0, 3", local(), brGeneration(t, b))
	}
}

// A reply to a round trip during which the view changed (the instance
// held its calls, or ended its hold) is not taken over the view unless it
// is newer: an older generation (the state went back) or another epoch
// waits for the next round trip. A view that had learnt no state takes
// the reply whatever happened meanwhile.
func TestBreakerReplyAfterViewChanged(t *testing.T) {
	opts := []BreakerOption{WithThreshold(1), WithCooldown(time.Second)}
	t.Run("first reply", func(t *testing.T) {
		b, f := brFakeBreaker(t, opts...)
		brDuring(f, func() { fail(b) }, brReply(7, 1, 0, 0, 0))
		b.sync()
		if b.ep.Load() != 7 || brGeneration(t, b) != 1 {
			t.Errorf("first reply, the instance held meanwhile: epoch %d generation %v, want 7, 1", b.ep.Load(), brGeneration(t, b))
		}
	})
	t.Run("hold", func(t *testing.T) {
		b, f := brFakeBreaker(t, opts...)
		f.set(func(string, []any) ([]any, error) { return brReply(7, 3, 0, 0, 0), nil })
		b.sync()
		brDuring(f, func() { fail(b) }, brReply(7, 2, 0, 0, 0))
		b.sync()
		if brGeneration(t, b) != 3 {
			t.Errorf("an older generation replied, the instance held meanwhile: generation %v, want 3 (kept)", brGeneration(t, b))
		}
		if err := succeed(b); !errors.Is(err, breaker.ErrOpen) {
			t.Errorf("the held instance after that reply: %v, want ErrOpen", err)
		}
		brDuring(f, func() {}, brReply(9, 1, 0, 0, 0)) // another epoch, nothing changed meanwhile
		b.sync()
		if b.ep.Load() != 9 {
			t.Errorf("another epoch replied to a round trip during which nothing changed: epoch %d, want 9", b.ep.Load())
		}
	})
	t.Run("hold, other epoch", func(t *testing.T) {
		b, f := brFakeBreaker(t, opts...)
		b.sync()
		brDuring(f, func() { fail(b) }, brReply(9, 1, 0, 0, 0))
		b.sync()
		if b.ep.Load() != 7 {
			t.Errorf("another epoch replied, the instance held meanwhile: epoch %d, want 7 (kept)", b.ep.Load())
		}
	})
	t.Run("release", func(t *testing.T) {
		b, f := brFakeBreaker(t, opts...)
		f.set(func(string, []any) ([]any, error) { return brReply(7, 3, 0, 0, 0), nil })
		b.sync()
		fail(b) // held for a second
		b.skew.Add(int64(2 * time.Second))
		brDuring(f, func() { succeed(b) }, brReply(7, 2, 0, 0, 0)) // the hold ends meanwhile
		b.sync()
		if brGeneration(t, b) != 3 {
			t.Errorf("an older generation replied, the hold ended meanwhile: generation %v, want 3 (kept)", brGeneration(t, b))
		}
	})
	t.Run("hold and release", func(t *testing.T) {
		b, f := brFakeBreaker(t, opts...)
		f.set(func(string, []any) ([]any, error) { return brReply(7, 3, 0, 0, 0), nil })
		b.sync()
		brDuring(f, func() {
			fail(b)
			b.skew.Add(int64(2 * time.Second))
			succeed(b)
		}, brReply(7, 2, 0, 0, 0))
		b.sync()
		if brGeneration(t, b) != 3 {
			t.Errorf("an older generation replied, the instance held and ended its hold meanwhile: generation %v, want 3 (kept)", brGeneration(t, b))
		}
		b.sync() // nothing changed during this one: the state went back
		if brGeneration(t, b) != 2 {
			t.Errorf("an older generation replied, nothing changed meanwhile: generation %v, want 2", brGeneration(t, b))
		}
	})
}

// A hold lasts its Cooldown whatever replies the instance gets of the
// state it knew, and ends with it: the view is no longer held.
func TestBreakerHoldOutlastsReplies(t *testing.T) {
	b, _ := brFakeBreaker(t, WithThreshold(1), WithCooldown(time.Second))
	b.sync()
	fail(b)
	b.sync() // the state as the instance knew it
	if err := succeed(b); !errors.Is(err, breaker.ErrOpen) {
		t.Errorf("held, after a reply of the same state: %v, want ErrOpen", err)
	}
	b.skew.Add(int64(2 * time.Second))
	if err := succeed(b); err != nil {
		t.Errorf("after the hold's Cooldown: %v, want admitted", err)
	}
	if viewHeld(b.word.Load()) {
		t.Errorf("after the hold's Cooldown the view is still held")
	}
}
