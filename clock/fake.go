package clock

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// epoch is the instant at which a new Fake starts.
var epoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// Fake is a manual [Clock] for tests. Its time only moves when
// [Fake.Advance] or [Fake.Set] is called; timers fire from inside those
// calls, in deadline order, with equal deadlines firing in the order they
// were armed (created or Reset). A timer callback that re-arms a timer for
// the instant being fired (t.Reset(0), AfterFunc(0, ...)) makes it fire again
// within the same Advance; past 1<<20 (1 048 576) firings at one instant
// within one Advance or Set, the call panics rather than loop for ever (see
// [Fake.Advance]).
//
// Create one with [NewFake]. The zero value is also ready to use and starts
// at the same instant, 2000-01-01 00:00:00 UTC. A Fake must not be copied
// after first use.
//
// A Fake is safe for simultaneous use by multiple goroutines.
type Fake struct {
	mu      sync.Mutex
	started bool            // now has been initialised to epoch
	now     time.Time       // current fake time
	timers  timerHeap       // armed timers, earliest deadline first
	seq     uint64          // arming counter, breaks deadline ties
	blocked []chan struct{} // one per BlockUntil call waiting; all closed when len(timers) changes

	// advMu serialises Advance and Set so time never moves backwards
	// under concurrent Advance calls.
	advMu sync.Mutex
}

var _ Clock = (*Fake)(nil)

// NewFake returns a Fake whose time is 2000-01-01 00:00:00 UTC and that has
// no timers.
func NewFake() *Fake {
	return &Fake{started: true, now: epoch}
}

// lock acquires f.mu and initialises a zero Fake.
func (f *Fake) lock() {
	f.mu.Lock()
	if !f.started {
		f.started = true
		f.now = epoch
	}
}

// notifyLocked wakes BlockUntil callers. f.mu must be held.
func (f *Fake) notifyLocked() {
	for i, ch := range f.blocked {
		close(ch)
		f.blocked[i] = nil
	}
	f.blocked = f.blocked[:0]
}

// Now returns the Fake's current time.
func (f *Fake) Now() time.Time {
	f.lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a Timer that sends the Fake's time on C() when an
// Advance or Set reaches now+d. If d <= 0 the value is sent at once, before
// NewTimer returns. C() has a buffer of one and the send never blocks: if
// a previous value is still unreceived, the new one is dropped.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1), index: -1}
	f.lock()
	f.armLocked(t, d)
	f.mu.Unlock()
	return t
}

// AfterFunc returns a Timer that calls fn when an Advance or Set reaches
// now+d. C() of the returned Timer is nil. A d <= 0 makes the timer due at
// the current time, so it fires on the next Advance (Advance(0) suffices).
//
// fn runs synchronously in the goroutine calling Advance or Set, with the
// Fake unlocked: it may call any method of the Fake or of its Timers
// (Now, NewTimer, AfterFunc, Stop, Reset, Waiters, ...) except Advance and
// Set, which would deadlock. fn must not block waiting for the Fake's time
// to move (for example by calling Sleep). AfterFunc panics if fn is nil.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	if fn == nil {
		panic("clock: AfterFunc with nil func")
	}
	t := &fakeTimer{f: f, fn: fn, index: -1}
	f.lock()
	f.armLocked(t, d)
	f.mu.Unlock()
	return t
}

// Sleep blocks until an Advance or Set reaches now+d, or until ctx is done,
// whichever comes first. It returns nil in the first case and ctx.Err() in
// the second. While it blocks it holds an armed timer, counted by
// [Fake.Waiters]; the timer is removed when ctx ends. If d <= 0 or ctx is
// already done, Sleep returns ctx.Err() at once without arming a timer.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	t := f.NewTimer(d)
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	}
}

// Advance moves the Fake's time forward by d, firing every timer whose
// deadline is at most the new time. Timers fire one at a time in deadline
// order (equal deadlines in arming order); while a timer fires, Now reports
// its deadline. Timers armed or Reset by AfterFunc callbacks during this
// Advance also fire within it if they are due by the new time. When
// Advance returns, all such callbacks have returned and Now reports the
// old time plus d.
//
// A goroutine woken by a timer that arms a new one (a loop of Sleep calls,
// say) does so concurrently with Advance, which may return before the new
// timer exists: step such code with [Fake.BlockUntil] then Advance, once
// per timer, rather than one large Advance.
//
// A callback that re-arms a timer for the current instant (t.Reset(0) or
// AfterFunc(0, ...) from a callback) makes it fire again at once, still
// within this Advance, so a callback that always does so would never let
// Advance return. Advance therefore fires at most 1<<20 (1 048 576) timers
// at any one instant: one more due at that instant makes it panic with a
// message starting "clock: more than 1048576 timer firings at", naming the
// instant. The count starts again at each new instant and in each call, so
// legitimate bursts (many timers due together, a bounded chain of
// zero-delay callbacks) are far below it. After the panic the Fake is still
// usable: Now reports that instant and the timer that would have fired
// next is still armed.
//
// Concurrent calls to Advance and Set are serialised. Advance must not be
// called from an AfterFunc callback of the same Fake. It panics if d < 0,
// or past the bound above.
func (f *Fake) Advance(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("clock: Advance with negative duration %v", d))
	}
	f.advMu.Lock()
	defer f.advMu.Unlock()
	f.lock()
	target := f.now.Add(d)
	f.mu.Unlock()
	f.advanceTo(target)
}

// Set sets the Fake's time to t. If t is not before the current time, Set is
// the same as Advance(t.Sub(f.Now())). If t is before it, Set moves the time
// back to t and fires nothing; armed timers keep their deadlines. Set must
// not be called from an AfterFunc callback of the same Fake. Like Advance,
// it panics when more than 1<<20 timers would fire at one instant.
func (f *Fake) Set(t time.Time) {
	f.advMu.Lock()
	defer f.advMu.Unlock()
	f.lock()
	if t.Before(f.now) {
		f.now = t
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	f.advanceTo(t)
}

// maxFiringsPerInstant bounds the timer firings at one instant within one
// Advance or Set; see Fake.Advance.
const maxFiringsPerInstant = 1 << 20

// advanceTo fires every timer due by target, then sets now to target.
// f.advMu must be held and f.mu must not be. It panics, with f.mu unlocked
// and the due timer still armed, when more than maxFiringsPerInstant
// timers would fire at one instant.
func (f *Fake) advanceTo(target time.Time) {
	firings := 0 // at f.now, within this call
	for {
		f.lock()
		if len(f.timers) == 0 || f.timers[0].when.After(target) {
			f.now = target
			f.mu.Unlock()
			return
		}
		if f.timers[0].when.After(f.now) {
			f.now = f.timers[0].when
			firings = 0
		}
		if firings == maxFiringsPerInstant {
			now := f.now
			f.mu.Unlock()
			panic(fmt.Sprintf("clock: more than %d timer firings at %v within one Advance or Set: "+
				"a timer callback re-arms a timer for the current instant (Reset(0) or AfterFunc(0)) without end",
				maxFiringsPerInstant, now))
		}
		firings++
		t := heap.Pop(&f.timers).(*fakeTimer)
		if t.c != nil {
			f.sendLocked(t)
		}
		f.notifyLocked()
		f.mu.Unlock()
		if t.fn != nil {
			t.fn()
		}
	}
}

// Waiters returns the number of armed timers: those created by NewTimer or
// AfterFunc, or held by Sleep calls in progress, that have not yet fired or
// been stopped.
func (f *Fake) Waiters() int {
	f.lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// BlockUntil blocks until [Fake.Waiters] reports at least n. It returns nil
// then, or ctx.Err() if ctx ends first. It does not poll: it is woken by
// every change in the number of armed timers.
func (f *Fake) BlockUntil(ctx context.Context, n int) error {
	for {
		f.lock()
		if len(f.timers) >= n {
			f.mu.Unlock()
			return nil
		}
		// Each call waits on a channel of its own and takes it back when it
		// gives up, so no channel outlives its waiter (a waiter inside a
		// testing/synctest bubble leaves nothing behind for code outside it).
		ch := make(chan struct{})
		f.blocked = append(f.blocked, ch)
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			f.lock()
			if i := slices.Index(f.blocked, ch); i >= 0 {
				f.blocked = slices.Delete(f.blocked, i, i+1)
			}
			f.mu.Unlock()
			return ctx.Err()
		}
	}
}

// armLocked arms t to fire d after now. f.mu must be held and t disarmed.
func (f *Fake) armLocked(t *fakeTimer, d time.Duration) {
	if t.c != nil && d <= 0 {
		t.when = f.now
		f.sendLocked(t)
		return
	}
	t.when = f.now.Add(max(d, 0))
	f.seq++
	t.seq = f.seq
	heap.Push(&f.timers, t)
	f.notifyLocked()
}

// sendLocked delivers now on t's channel without blocking. f.mu must be held.
func (f *Fake) sendLocked(t *fakeTimer) {
	select {
	case t.c <- f.now:
	default:
	}
}

// fakeTimer is the Timer of a Fake. Its fields other than f, c and fn are
// guarded by f.mu.
type fakeTimer struct {
	f     *Fake
	c     chan time.Time // nil for AfterFunc timers
	fn    func()         // nil for channel timers
	when  time.Time      // deadline
	seq   uint64         // arming order
	index int            // position in f.timers, -1 when not armed
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

// Stop disarms t. As with time.Timer in Go 1.23+, a value sent on C() but
// not yet received is discarded and counts as "not fired", so Stop reports
// true in that case.
func (t *fakeTimer) Stop() bool {
	f := t.f
	f.lock()
	defer f.mu.Unlock()
	return t.stopLocked()
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	f := t.f
	f.lock()
	defer f.mu.Unlock()
	active := t.stopLocked()
	f.armLocked(t, d)
	return active
}

// stopLocked disarms t and drains C(). It reports whether t was armed or
// had an undelivered value. t.f.mu must be held.
func (t *fakeTimer) stopLocked() bool {
	active := false
	if t.index >= 0 {
		heap.Remove(&t.f.timers, t.index)
		t.f.notifyLocked()
		active = true
	}
	if t.c != nil {
		select {
		case <-t.c:
			active = true
		default:
		}
	}
	return active
}

// timerHeap is a min-heap of armed timers ordered by (when, seq).
type timerHeap []*fakeTimer

func (h timerHeap) Len() int { return len(h) }

func (h timerHeap) Less(i, j int) bool {
	if !h[i].when.Equal(h[j].when) {
		return h[i].when.Before(h[j].when)
	}
	return h[i].seq < h[j].seq
}

func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *timerHeap) Push(x any) {
	t := x.(*fakeTimer)
	t.index = len(*h)
	*h = append(*h, t)
}

func (h *timerHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	t.index = -1
	*h = old[:n-1]
	return t
}
