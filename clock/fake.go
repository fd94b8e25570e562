package clock

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
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
	// firing is the id of the goroutine running AfterFunc callbacks in
	// advanceTo, 0 when none is: Advance, Set and Sleep called on that
	// goroutine would wait for ever, so they panic (see checkNotFiring).
	firing atomic.Uint64
	// stack is advanceTo's buffer for goid, guarded by advMu, so that an
	// Advance that fires callbacks allocates nothing.
	stack [64]byte
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
// fn runs synchronously in the goroutine calling Advance, AdvanceNext or
// Set, with the Fake unlocked: it may call any method of the Fake or of its
// Timers (Now, NewTimer, AfterFunc, Stop, Reset, Waiters, ...) except
// Advance, AdvanceNext, Set and a Sleep that would block: time cannot move until fn returns, so
// those panic rather than wait for ever. fn must not block waiting for the
// Fake's time to move in any other way either (a goroutine of its own that
// sleeps, say), which would hang. AfterFunc panics if fn is nil.
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
//
// Called from an AfterFunc callback of the same Fake, a Sleep that would
// block panics: time cannot move until the callback returns.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	f.checkNotFiring("Sleep")
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
// Concurrent calls to Advance and Set are serialised: one made while
// another runs callbacks waits for it. Advance called from an AfterFunc
// callback of the same Fake, which would wait for ever for the Advance or
// Set that runs the callback, panics instead, with a message starting
// "clock: Advance called from an AfterFunc callback of the same Fake"; the
// Fake is still usable. Advance also panics if d < 0, or past the bound
// above.
func (f *Fake) Advance(d time.Duration) {
	if d < 0 {
		panic(fmt.Sprintf("clock: Advance with negative duration %v", d))
	}
	f.lockAdvance("Advance")
	defer f.advMu.Unlock()
	f.lock()
	target := f.now.Add(d)
	f.mu.Unlock()
	f.advanceTo(target)
}

// Set sets the Fake's time to t. If t is not before the current time, Set is
// the same as Advance(t.Sub(f.Now())). If t is before it, Set moves the time
// back to t and fires nothing; armed timers keep their deadlines. Like
// Advance, Set panics when called from an AfterFunc callback of the same
// Fake, and when more than 1<<20 timers would fire at one instant.
func (f *Fake) Set(t time.Time) {
	f.lockAdvance("Set")
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

// AdvanceNext fires the next armed timer alone: the one with the earliest
// deadline, equal deadlines in arming order (created or Reset). It first
// moves the Fake's time to that deadline if it is later than the current
// time (it never moves time back), then sends on the timer's channel or
// runs its AfterFunc callback synchronously, in the calling goroutine, with
// the Fake unlocked. It reports whether a timer fired; with no timer armed
// it does nothing and reports false.
//
// Unlike Advance, which fires every due timer in one call, AdvanceNext lets
// the caller wait between two firings at the same instant until the code
// woken by the first has reacted; resiliencetest.Drive uses it so that
// timers that coincide take effect one after the other, in a fixed order.
//
// Concurrent calls to AdvanceNext, Advance and Set are serialised. Called
// from an AfterFunc callback of the same Fake, AdvanceNext panics, as
// Advance does.
func (f *Fake) AdvanceNext() bool {
	f.lockAdvance("AdvanceNext")
	defer f.advMu.Unlock()
	f.lock()
	if len(f.timers) == 0 {
		f.mu.Unlock()
		return false
	}
	t := heap.Pop(&f.timers).(*fakeTimer)
	if t.when.After(f.now) {
		f.now = t.when
	}
	if t.c != nil {
		f.sendLocked(t)
	}
	f.notifyLocked()
	f.mu.Unlock()
	if t.fn != nil {
		f.firing.Store(goid(&f.stack))
		defer f.firing.Store(0)
		t.fn()
	}
	return true
}

// lockAdvance locks f.advMu for op (Advance or Set). When it is held, it
// first panics if the caller is an AfterFunc callback of f, which holds it
// through the callback and would wait for ever.
func (f *Fake) lockAdvance(op string) {
	if f.advMu.TryLock() {
		return
	}
	f.checkNotFiring(op)
	f.advMu.Lock()
}

// checkNotFiring panics, naming op, if the calling goroutine is running
// AfterFunc callbacks of f: time cannot move until they return. It costs
// one atomic load unless some goroutine is running callbacks of f.
func (f *Fake) checkNotFiring(op string) {
	if g := f.firing.Load(); g != 0 && g == goid(new([64]byte)) {
		panic("clock: " + op + " called from an AfterFunc callback of the same Fake: " +
			"the callback runs inside Advance or Set, so time cannot move until it returns")
	}
}

// goid returns the id of the calling goroutine, read from the first line
// of its stack trace ("goroutine 18 [running]:"), or 0 (no goroutine: the
// check is off) if it cannot read it. Ids are never reused.
// It takes about a microsecond: it is called only around callbacks. buf
// is its scratch space.
func goid(buf *[64]byte) uint64 {
	b := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	var id uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
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
	firing := false
	defer func() {
		if firing {
			f.firing.Store(0)
		}
	}()
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
			if !firing {
				firing = true
				f.firing.Store(goid(&f.stack))
			}
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
