package bulkhead

// waiter is one caller queued for a slot.
type waiter struct {
	ready      chan struct{} // closed when the slot is handed over
	granted    bool          // the slot was handed over; guarded by Bulkhead.mu
	prev, next *waiter
}

// queue is the first-come, first-served line of waiters: a doubly linked
// list, so that a caller whose context ends leaves from anywhere in O(1).
// The zero queue is empty. Guarded by Bulkhead.mu.
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

// popFront removes and returns the first waiter; the queue must not be
// empty.
func (q *queue) popFront() *waiter {
	w := q.head
	q.remove(w)
	return w
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
