package breaker

// Transitions happen with b.mu held; their callbacks run without it. A
// transition appends its Transition to b.events; whoever unlocks next
// delivers the queue, unless another goroutine is already delivering it
// (then that one delivers the new transition too, after the ones before).
// So callbacks run one at a time, in transition order, and a callback may
// call the breaker: a transition it causes is queued and delivered after it
// returns.

// unlock releases b.mu and delivers pending transitions.
func (b *Breaker) unlock() {
	pending := !b.delivering && b.head < len(b.events)
	b.mu.Unlock()
	if pending {
		b.deliver()
	}
}

// deliver calls Config.OnStateChange for each queued transition, in order.
// A panic in the callback goes up to deliver's caller; the deferred
// function re-takes the lock and resets b.delivering, so the transitions
// after it stay queued for the next delivery instead of being wedged.
func (b *Breaker) deliver() {
	b.mu.Lock()
	if b.delivering {
		b.mu.Unlock()
		return
	}
	b.delivering = true
	held := true
	defer func() {
		if !held {
			b.mu.Lock()
		}
		b.delivering = false
		b.mu.Unlock()
	}()
	for b.head < len(b.events) {
		t := b.events[b.head]
		b.events[b.head] = Transition{}
		b.head++
		if b.head == len(b.events) {
			b.events, b.head = b.events[:0], 0
		}
		held = false
		b.mu.Unlock()
		b.cfg.onChange(t)
		b.mu.Lock()
		held = true
	}
}
