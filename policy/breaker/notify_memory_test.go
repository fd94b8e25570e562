package breaker

import (
	"runtime"
	"testing"
	"weak"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// The queue of notes keeps nothing once delivered: its memory stays that
// of the longest burst, and a delivered event's error is not kept alive.

type discard struct{}

func (discard) Observe(telemetry.Event) {}

type heavyErr struct{ _ [64]byte }

func (*heavyErr) Error() string { return "heavy" }

func TestDeliveredNotesAreNotKept(t *testing.T) {
	b := New(WithClock(clock.NewFake()), WithThreshold(1), WithObserver(discard{}))
	for range 1000 {
		b.Record(true) // a failure and an opening
		b.Reset()      // a closing
	}
	lockWithin(t, &b.mu, "the breaker's mutex")
	n := cap(b.notes.q)
	b.mu.Unlock()
	if n > 16 {
		t.Errorf("after 1000 deliveries the queue holds room for %d notes, want a few", n)
	}

	err := &heavyErr{}
	w := weak.Make(err)
	b.Record(false)
	p, _ := b.Allow()
	p.Done(err) // a failure: its error goes in a note
	err = nil
	for i := 0; i < 10 && w.Value() != nil; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if w.Value() != nil {
		t.Error("the error of a delivered failure event is still reachable")
	}
	runtime.KeepAlive(b)
}
