package breaker

import (
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// A shard word is retagged for a new generation (a refusal's) or folded
// into the carry (a success's) only under the breaker's lock, whichever
// path the call took to get there: that keeps the lifetime total of
// refusals and the successes exact against a transition running at the
// same time. Each test holds the lock, makes the call on another
// goroutine, and checks that the word does not change until the lock is
// released.

// lockedDuring holds b's lock while f runs on another goroutine, and fails
// t if word changes before the lock is released; then it waits for f.
func lockedDuring(t *testing.T, b *Breaker, word *atomic.Uint64, f func()) {
	t.Helper()
	lockWithin(t, &b.mu, "the breaker's mutex")
	before := word.Load()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	changed := false
	for i := 0; i < 20000 && !changed; i++ {
		changed = word.Load() != before
		runtime.Gosched()
	}
	b.mu.Unlock()
	recvWithin(t, done, "the call, once the lock is released")
	if changed {
		t.Error("the shard word changed while another goroutine held the breaker's lock")
	}
}

func TestFirstRefusalOfAGenerationRetagsUnderTheLock(t *testing.T) {
	t.Run("forced open", func(t *testing.T) {
		b := New(WithClock(clock.NewFake()))
		b.ForceOpen()
		lockedDuring(t, b, &b.s0.rej, func() { _, _ = b.Allow() })
		if got := b.Stats().Refused; got != 1 {
			t.Errorf("Stats().Refused = %d, want 1", got)
		}
	})
	t.Run("open", func(t *testing.T) {
		b := New(WithClock(clock.NewFake()), WithThreshold(1))
		b.Record(true)
		lockedDuring(t, b, &b.s0.rej, func() { _, _ = b.Allow() })
		if got := b.Stats().Refused; got != 1 {
			t.Errorf("Stats().Refused = %d, want 1", got)
		}
	})
	t.Run("real clock, fresh hint, full word", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := New(WithThreshold(1), WithCooldown(time.Second))
			b.Record(true)
			_, _ = b.Allow() // freshens the hint
			b.s0.rej.Store(tag(wordGen(b.word.Load())) | countMask)
			lockedDuring(t, b, &b.s0.rej, func() { _, _ = b.Allow() })
			if got, want := b.Stats().Refused, uint64(countMask)+1; got != want {
				t.Errorf("Stats().Refused = %d, want %d", got, want)
			}
			b.Reset() // stops the hint's timer
		})
	})
}

func TestFoldOfAFullSuccessWordIsUnderTheLock(t *testing.T) {
	b := New(WithClock(clock.NewFake()))
	b.s0.succ.Store(tag(wordGen(b.word.Load())) | countMask)
	lockedDuring(t, b, &b.s0.succ, func() { b.Record(false) })
	if got, want := b.Counts().Successes, uint64(countMask)+1; got != want {
		t.Errorf("Counts().Successes = %d, want %d", got, want)
	}
}

// A refusal takes no lock, but the first of its generation (which retags
// the shard's word, above): a breaker that refuses a flood of calls does
// not line them up on its mutex. Each refusal here is made while the test
// holds the lock, and must return.
func TestRefusalsTakeNoLock(t *testing.T) {
	for _, tc := range []struct {
		name   string
		open   func(b *Breaker)
		reason error
	}{
		{"open", func(b *Breaker) { b.Record(true) }, ErrOpen},
		{"forced open", (*Breaker).ForceOpen, ErrForcedOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := New(WithClock(clock.NewFake()), WithThreshold(1), WithCooldown(time.Minute))
			tc.open(b)
			_, _ = b.Allow() // the generation's first refusal
			lockWithin(t, &b.mu, "the breaker's mutex")
			unlocked := false
			defer func() {
				if !unlocked {
					b.mu.Unlock() // after a failure: lets a refusal stuck on it end
				}
			}()
			for range 3 {
				err := within(t, "a refusal while the lock is held", func() error { _, err := b.Allow(); return err })
				if !errors.Is(err, tc.reason) {
					t.Fatalf("Allow() = %v, want a refusal matching %v", err, tc.reason)
				}
			}
			b.mu.Unlock()
			unlocked = true
			if got := b.Stats().Refused; got != 4 {
				t.Errorf("Stats().Refused = %d, want 4", got)
			}
		})
	}
}
