package breaker

import "github.com/f0b5b96b/resilience/telemetry"

// Transitions happen with b.mu held; their callbacks run without it. A
// transition appends a note to b.notes, as does a counted failure when an
// observer is set (so that the failure that trips the breaker comes before
// its opening); whoever unlocks next delivers the queue, unless another
// goroutine is already delivering it (then that one delivers the new notes
// too, after the ones before). So callbacks and the observer's calls for
// notes run one at a time, in order, and a callback may call the breaker:
// a transition it causes is queued and delivered after it returns.

// notes is the queue of notes not yet delivered, from head on. A breaker
// makes its queue when it first needs one: one without OnStateChange and
// without an observer never does.
type notes struct {
	q          []note
	head       int
	delivering bool
}

// queueLocked appends n to b's queue, making the queue if need be.
func (b *Breaker) queueLocked(n note) {
	if b.notes == nil {
		b.notes = new(notes)
	}
	b.notes.q = append(b.notes.q, n)
}

// note is one queued delivery: a transition (for Config.OnStateChange and
// the observer) or an event for the observer alone.
type note struct {
	transition bool
	tr         Transition      // when transition
	ev         telemetry.Event // the observer's event
}

// unlock releases b.mu and delivers pending notes.
func (b *Breaker) unlock() {
	q := b.notes
	pending := q != nil && !q.delivering && q.head < len(q.q)
	b.mu.Unlock()
	if pending {
		b.deliver()
	}
}

// deliver calls Config.OnStateChange for each queued transition, then the
// observer, in order. A panic in either goes up to deliver's caller; the
// deferred function re-takes the lock and resets b.delivering, so the
// notes after it stay queued for the next delivery instead of being
// wedged. (A callback that panics makes the observer miss that
// transition.)
func (b *Breaker) deliver() {
	b.mu.Lock()
	q := b.notes // not nil: unlock saw notes pending
	if q.delivering {
		b.mu.Unlock()
		return
	}
	q.delivering = true
	held := true
	defer func() {
		if !held {
			b.mu.Lock()
		}
		q.delivering = false
		b.mu.Unlock()
	}()
	for q.head < len(q.q) {
		n := q.q[q.head]
		q.q[q.head] = note{}
		q.head++
		if q.head == len(q.q) {
			q.q, q.head = q.q[:0], 0
		}
		held = false
		b.mu.Unlock()
		if n.transition && b.cfg.onChange != nil {
			b.cfg.onChange(n.tr)
		}
		if b.cfg.obs != nil {
			b.cfg.obs.Observe(n.ev)
		}
		b.mu.Lock()
		held = true
	}
}
