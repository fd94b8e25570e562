package adaptive

import (
	"context"
	"time"
)

// waiter is one caller queued for admission.
type waiter struct {
	ready      chan struct{} // closed when admitted or evicted
	prio       Priority
	granted    bool // admitted: it holds a slot; guarded by Limiter.mu
	evicted    bool // refused, its place taken; guarded by Limiter.mu
	prev, next *waiter
}

// queue is one priority's first-come, first-served line of waiters: a
// doubly linked list, so that a caller whose context ends leaves from
// anywhere in O(1). The zero queue is empty. Guarded by Limiter.mu.
type queue struct{ head, tail *waiter }

func (q *queue) pushBack(w *waiter) {
	w.prev, w.next = q.tail, nil
	if q.tail == nil {
		q.head = w
	} else {
		q.tail.next = w
	}
	q.tail = w
}

// remove unlinks w, which must be in q.
func (q *queue) remove(w *waiter) {
	if w.prev == nil {
		q.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		q.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
}

// acquireSlow admits a call of priority p, or queues it, under the lock.
func (l *Limiter) acquireSlow(ctx context.Context, p Priority) (Permit, error) {
	l.mu.Lock()
	for {
		s := l.state.Load()
		if heldOf(s) < l.ceiling(limitOf(s), p) && !l.waitingLocked(p) {
			if l.state.CompareAndSwap(s, s+1) {
				l.mu.Unlock()
				return l.admitted(ctx, heldOf(s)+1), nil
			}
			continue
		}
		if queuedOf(s) >= l.maxQueue {
			victim := l.victimLocked(p)
			if victim == nil {
				l.mu.Unlock()
				return Permit{}, l.refuse(l.full, l.now())
			}
			// The newcomer takes the victim's place: the queued count
			// stays as it is.
			l.queues[victim.prio.rank()].remove(victim)
			victim.evicted = true
			close(victim.ready)
			l.rejected.Add(1)
			l.winRejected.Add(1)
			break
		}
		// Only lock-free changes of the limit or of the calls in flight
		// may change state now, and they fail this CAS if they do.
		if l.state.CompareAndSwap(s, s+oneQueued) {
			break
		}
	}
	w := &waiter{ready: make(chan struct{}), prio: p}
	l.queues[p.rank()].pushBack(w)
	l.mu.Unlock()
	return l.wait(ctx, w)
}

// waitingLocked reports whether a caller of priority p or higher is
// queued. l.mu must be held.
func (l *Limiter) waitingLocked(p Priority) bool {
	for r := 0; r <= p.rank(); r++ {
		if l.queues[r].head != nil {
			return true
		}
	}
	return false
}

// victimLocked returns the newest queued caller of the lowest priority
// below p, or nil. l.mu must be held.
func (l *Limiter) victimLocked(p Priority) *waiter {
	for r := Low.rank(); r > p.rank(); r-- {
		if w := l.queues[r].tail; w != nil {
			return w
		}
	}
	return nil
}

// dispatchLocked admits queued callers, highest priority first, while the
// first of them may have a slot. Ceilings only fall with the priority, so
// when the first in line may not be admitted, nobody may. l.mu must be
// held.
func (l *Limiter) dispatchLocked() {
	for {
		var w *waiter
		for r := range l.queues {
			if w = l.queues[r].head; w != nil {
				break
			}
		}
		if w == nil {
			return
		}
		s := l.state.Load()
		if heldOf(s) >= l.ceiling(limitOf(s), w.prio) {
			return
		}
		if l.state.CompareAndSwap(s, s+1-oneQueued) {
			l.queues[w.prio.rank()].remove(w)
			w.granted = true
			close(w.ready)
		}
	}
}

// leaveLocked takes w, neither granted nor evicted, out of the queue, and
// admits whoever it held back. l.mu must be held.
func (l *Limiter) leaveLocked(w *waiter) {
	l.queues[w.prio.rank()].remove(w)
	l.state.Add(^uint64(oneQueued - 1)) // one caller fewer queued
	l.dispatchLocked()
}

// wait blocks a queued caller until it is admitted or evicted, its ctx
// ends, or MaxWait passes.
func (l *Limiter) wait(ctx context.Context, w *waiter) (Permit, error) {
	var timeout <-chan time.Time
	if l.cfg.MaxWait > 0 {
		t := l.clk.NewTimer(l.cfg.MaxWait)
		defer t.Stop()
		timeout = t.C()
	}
	select {
	case <-w.ready:
		return l.woken(ctx, w)
	case <-ctx.Done():
		l.mu.Lock()
		switch {
		case w.granted:
			// Admitted as ctx ended: the slot goes on to the next in line.
			l.mu.Unlock()
			l.release()
		case w.evicted:
			l.mu.Unlock()
		default:
			l.leaveLocked(w)
			l.mu.Unlock()
		}
		return Permit{}, ctx.Err()
	case <-timeout:
		l.mu.Lock()
		if w.granted || w.evicted {
			l.mu.Unlock()
			return l.woken(ctx, w) // decided in time after all
		}
		l.leaveLocked(w)
		l.mu.Unlock()
		return Permit{}, l.refuse(l.timedOut, l.now())
	}
}

// woken ends the wait of a caller that was admitted or evicted. An
// admitted caller whose ctx has ended by now gives its slot on, as
// golang.org/x/sync/semaphore does.
func (l *Limiter) woken(ctx context.Context, w *waiter) (Permit, error) {
	if w.evicted {
		return Permit{}, l.full
	}
	if err := ctx.Err(); err != nil {
		l.release()
		return Permit{}, err
	}
	return l.admitted(ctx, heldOf(l.state.Load())), nil
}
