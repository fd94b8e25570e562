package sim

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// The simulator runs every simulated call on a goroutine of its own, a
// proc, but lets only one goroutine run at a time: either the scheduler
// (the goroutine of Run) or one proc, which holds the baton. A proc gives
// the baton back when it waits on the simulator's clock (Sleep) or ends;
// the scheduler then takes the next event from the queue — a proc to wake,
// or a callback to run (an AfterFunc, the end of a server call) — in order
// of virtual time, events of the same time in the order they were queued.
// With one goroutine running at a time and a fixed order of events, a run
// depends on nothing but its seed.

// epoch is the instant at which virtual time starts, as clock.Fake's does.
var epoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// stuckAfter is how long, in wall-clock time, the scheduler waits for a
// proc to give the baton back before it gives up: the proc is blocked on
// something other than the simulator's clock.
const stuckAfter = 10 * time.Second

// world is the state of one run: virtual time, the event queue, the procs.
// Its fields are used by the goroutine that holds the baton; mu guards them
// against other goroutines that call the clock (which they should not).
type world struct {
	mu    sync.Mutex
	now   time.Duration // virtual time since epoch
	queue eventQueue
	seq   uint64 // queueing order, breaks ties of time

	cur   *proc         // the proc holding the baton; nil while the scheduler runs
	yield chan struct{} // a proc gives the baton back on it; buffered, so that one left behind by a stuck run can end
	live  int           // procs started and not ended

	// asleep holds the procs asleep on a context that can end before their
	// wake-up (a timeout's), for checkCancelled.
	asleep []*proc

	root     context.Context // every simulated call's context; cancelled at the end
	rootDone <-chan struct{}
	cancel   context.CancelFunc
	stopping bool // the run is over: procs are being unwound

	panicked bool
	panicVal any

	steps atomic.Uint64 // steps taken, for the watchdog
}

func newWorld() *world {
	root, cancel := context.WithCancel(context.Background())
	return &world{yield: make(chan struct{}, 1), root: root, rootDone: root.Done(), cancel: cancel}
}

// event is an entry of the queue: a proc to wake or a callback to run.
type event struct {
	at    time.Duration
	seq   uint64
	index int // in the queue; -1 when not queued

	proc *proc  // the proc to wake, or nil
	fn   func() // the callback to run, when proc is nil
	user bool   // fn is an AfterFunc of the pipeline: it may end contexts
}

// eventQueue is a min-heap of events by (at, seq).
type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}
func (q *eventQueue) Push(x any) {
	e := x.(*event)
	e.index = len(*q)
	*q = append(*q, e)
}
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*q = old[:len(old)-1]
	return e
}

// after returns the virtual time d from now, saturating.
func (w *world) after(d time.Duration) time.Duration {
	if d > math.MaxInt64-w.now {
		return math.MaxInt64
	}
	return w.now + max(d, 0)
}

// schedule queues e at virtual time at. w.mu must be held.
func (w *world) scheduleLocked(e *event, at time.Duration) {
	w.seq++
	e.at, e.seq = at, w.seq
	heap.Push(&w.queue, e)
}

// unscheduleLocked removes e from the queue; it reports whether e was
// queued. w.mu must be held.
func (w *world) unscheduleLocked(e *event) bool {
	if e.index < 0 {
		return false
	}
	heap.Remove(&w.queue, e.index)
	return true
}

// proc is a simulated goroutine: one client of the workload.
type proc struct {
	w       *world
	wake    chan struct{} // the scheduler hands it the baton on it
	ev      event         // its wake-up
	body    func()
	started bool

	done    <-chan struct{} // Done of the context it sleeps on, if in w.asleep
	slot    int             // its index in w.asleep, or -1
	byCtx   bool            // woken because that context ended
	stopped bool            // woken to unwind at the end of the run
}

// spawn queues a proc that runs body, starting at virtual time at. w.mu
// must be held.
func (w *world) spawnLocked(at time.Duration, body func()) {
	p := &proc{w: w, wake: make(chan struct{}), body: body, slot: -1}
	p.ev = event{proc: p, index: -1}
	w.scheduleLocked(&p.ev, at)
}

// main is the goroutine of p.
func (p *proc) main() {
	<-p.wake
	w := p.w
	defer func() {
		if r := recover(); r != nil {
			w.panicked, w.panicVal = true, r
		}
		w.live--
		w.yield <- struct{}{}
	}()
	p.body()
}

// run takes events from the queue in order until the queue is empty or
// the next event is past end, then unwinds the procs still asleep. It
// re-panics a proc's panic.
func (w *world) run(end time.Duration) {
	stop := make(chan struct{})
	defer close(stop)
	stuck := w.watchdog(stop)
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			w.mu.Unlock()
			break
		}
		e := heap.Pop(&w.queue).(*event)
		if e.at > end && !w.stopping {
			heap.Push(&w.queue, e)
			w.now = end
			w.stopLocked()
			w.mu.Unlock()
			continue
		}
		if !w.stopping {
			w.now = e.at
		}
		w.mu.Unlock()

		switch {
		case e.proc != nil:
			w.step(e.proc, stuck)
		case !w.stopping:
			w.callback(e)
		}
		if w.panicked && !w.stopping {
			w.mu.Lock()
			w.stopLocked()
			w.mu.Unlock()
		}
	}
	if w.panicked {
		panic(w.panicVal)
	}
}

// callback runs e's fn on the scheduler; a panic in it ends the run, as
// a simulated call's does.
func (w *world) callback(e *event) {
	defer func() {
		if r := recover(); r != nil {
			w.panicked, w.panicVal = true, r
		}
	}()
	e.fn()
	if e.user {
		w.checkCancelled()
	}
}

// stopLocked ends the run: the root context is cancelled, so every
// simulated call's context is done, and every proc asleep is woken (as its
// event comes up) to unwind. w.mu must be held.
func (w *world) stopLocked() {
	w.stopping = true
	w.cancel()
}

// step hands the baton to p until it gives it back.
func (w *world) step(p *proc, stuck <-chan struct{}) {
	w.mu.Lock()
	if p.slot >= 0 {
		w.forgetLocked(p)
	}
	if w.stopping {
		p.stopped = true
	}
	w.cur = p
	w.mu.Unlock()
	if !p.started {
		p.started = true
		w.live++
		go p.main()
	}
	p.wake <- struct{}{}
	select {
	case <-w.yield:
	case <-stuck:
		panic(fmt.Sprintf("sim: a simulated call blocked for %v of wall-clock time on something other than the simulator's clock "+
			"(a bulkhead queue, a hedge, a timeout WithAbandon, a lock or channel of its own?)", stuckAfter))
	}
	w.steps.Add(1)
	w.mu.Lock()
	w.cur = nil
	w.mu.Unlock()
}

// watchdog returns a channel that is closed when no step has completed for
// stuckAfter of wall-clock time, until stop is closed.
func (w *world) watchdog(stop <-chan struct{}) <-chan struct{} {
	stuck := make(chan struct{})
	go func() {
		const tick = time.Second
		t := time.NewTicker(tick)
		defer t.Stop()
		last, idle := w.steps.Load(), time.Duration(0)
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			if n := w.steps.Load(); n != last {
				last, idle = n, 0
				continue
			}
			if idle += tick; idle >= stuckAfter {
				close(stuck)
				return
			}
		}
	}()
	return stuck
}

// checkCancelled wakes the procs asleep on a context that has ended, in the
// order they fell asleep. It runs after each AfterFunc callback, the only
// events that can end such a context (a timeout's).
func (w *world) checkCancelled() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := 0; i < len(w.asleep); {
		p := w.asleep[i]
		select {
		case <-p.done:
		default:
			i++
			continue
		}
		w.forgetLocked(p) // moves the last proc to slot i
		w.unscheduleLocked(&p.ev)
		p.byCtx = true
		w.scheduleLocked(&p.ev, w.now)
	}
}

// forgetLocked removes p from w.asleep. w.mu must be held.
func (w *world) forgetLocked(p *proc) {
	last := len(w.asleep) - 1
	moved := w.asleep[last]
	w.asleep[p.slot], moved.slot = moved, p.slot
	w.asleep[last] = nil
	w.asleep = w.asleep[:last]
	p.slot, p.done = -1, nil
}

// sleep puts the current proc to sleep for d or until ctx ends; see
// simClock.Sleep.
func (w *world) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	w.mu.Lock()
	p := w.cur
	if p == nil {
		w.mu.Unlock()
		panic("sim: Sleep called outside a simulated call (from an AfterFunc callback, or from a goroutine the simulator does not run)")
	}
	if w.stopping {
		w.mu.Unlock()
		return context.Canceled
	}
	w.scheduleLocked(&p.ev, w.after(d))
	if done := ctx.Done(); done != nil && done != w.rootDone {
		p.done, p.slot = done, len(w.asleep)
		w.asleep = append(w.asleep, p)
	}
	p.byCtx = false
	w.cur = nil
	w.mu.Unlock()

	w.yield <- struct{}{}
	<-p.wake

	switch {
	case p.stopped:
		if err := ctx.Err(); err != nil {
			return err
		}
		return context.Canceled
	case p.byCtx:
		return ctx.Err()
	}
	return nil
}

// simClock is the clock.Clock of a run: virtual time on the event queue.
type simClock struct{ w *world }

var _ clock.Clock = simClock{}

func (c simClock) Now() time.Time {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return epoch.Add(c.w.now)
}

// Sleep blocks the simulated call for d of virtual time, or until ctx ends.
func (c simClock) Sleep(ctx context.Context, d time.Duration) error { return c.w.sleep(ctx, d) }

// NewTimer panics: a goroutine waiting on a timer's channel waits outside
// the simulator's knowledge, so it cannot be stepped deterministically.
func (c simClock) NewTimer(time.Duration) clock.Timer {
	panic("sim: NewTimer is not supported: the simulator steps calls that wait with Sleep or AfterFunc; " +
		"a pipeline that waits on a timer's channel (a bulkhead queue with MaxWait) cannot be simulated")
}

// AfterFunc queues f to run at now+d of virtual time, on the scheduler,
// between steps of the simulated calls.
func (c simClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	if f == nil {
		panic("sim: AfterFunc with nil func")
	}
	t := &simTimer{w: c.w}
	t.ev = event{fn: f, user: true, index: -1}
	c.w.mu.Lock()
	c.w.scheduleLocked(&t.ev, c.w.after(d))
	c.w.mu.Unlock()
	return t
}

// simTimer is the Timer of an AfterFunc.
type simTimer struct {
	w  *world
	ev event
}

func (t *simTimer) C() <-chan time.Time { return nil }

func (t *simTimer) Stop() bool {
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	return t.w.unscheduleLocked(&t.ev)
}

func (t *simTimer) Reset(d time.Duration) bool {
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	active := t.w.unscheduleLocked(&t.ev)
	t.w.scheduleLocked(&t.ev, t.w.after(d))
	return active
}
