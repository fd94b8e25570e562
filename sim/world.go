package sim

import (
	"cmp"
	"container/heap"
	"context"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/goroutines"
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
//
// Goroutines that the pipeline starts (a hedge's attempts) become procs
// (adopted) when they first call the clock or the server (enter), and a
// proc that blocks on something other than the clock (a channel) gives the
// baton up without a word: the scheduler sees it blocked in a stack
// snapshot (group). Whenever such goroutines may be running, the scheduler
// waits after each event until every goroutine of the run is blocked
// (settle), then queues the procs that asked for the baton meanwhile, in
// the order they were created.

// epoch is the instant at which virtual time starts, as clock.Fake's does.
var epoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// stuckAfter is how long, in wall-clock time, the scheduler waits for a
// proc to give the baton back before it gives up: the proc is blocked on
// something other than the simulator's clock.
const stuckAfter = 10 * time.Second

// world is the state of one run: virtual time, the event queue, the procs.
// Its fields are used by the goroutine that holds the baton; mu guards them
// against other goroutines of the run that call the clock while another
// holds it.
type world struct {
	mu    sync.Mutex
	now   time.Duration // virtual time since epoch
	queue eventQueue
	seq   uint64 // queueing order, breaks ties of time

	cur   *proc         // the proc holding the baton; nil while the scheduler runs
	yield chan struct{} // a proc gives the baton back on it; buffered, so that one left behind by a stuck run can end
	ended chan struct{} // closed at the end of the run: the goroutines of ended procs exit

	// asleep holds the procs asleep on a context that can end before their
	// wake-up (a timeout's), for checkCancelled.
	asleep []*proc

	// The goroutines of the pipeline: sched is the scheduler's goroutine;
	// procs are the procs by goroutine, the clients' and those adopted
	// (goroutines the pipeline started, such as a hedge's attempts, that
	// called the clock or the server); nextID numbers the procs, for the
	// order of pending; pending are procs that asked for the baton while
	// another held it, queued at the next settle. outside counts the
	// goroutines of the run, as of the last settle, that are neither
	// parked on the clock nor ended (blocked on a channel of the
	// pipeline's), plus those that asked for the baton or blocked since:
	// while it is not 0, the scheduler waits, after each event, until
	// every goroutine of the run is blocked (see settle).
	sched   uint64
	procs   map[uint64]*proc
	nextID  int
	pending []*proc
	outside int
	// ctxMayEnd is set by a step (a call may cancel a context another
	// sleeps on, as a hedge's winner ends the other attempts' context) and
	// an AfterFunc callback (a timeout's may end a context): it makes a
	// calm settle look for procs asleep on a context that ended (a settle
	// that is not calm always looks: a goroutine woken off the clock may
	// have ended one). No other event ends a context: a server call's
	// finish, a watch's reading, a NewTimer's send (a goroutine waiting on
	// its channel is blocked off the clock: the run is not calm).
	// adopted is set once a goroutine of the pipeline was adopted: step
	// then spins longer before its first look at the stacks.
	ctxMayEnd bool
	adopted   bool
	group     *group
	timer     *time.Timer // the scheduler's, for its waits in step
	created   uint64      // goroutines created in the process (goroutinesCreated) when last settled, plus the procs started since

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
	return &world{yield: make(chan struct{}, 1), ended: make(chan struct{}), root: root, rootDone: root.Done(), cancel: cancel,
		procs: map[uint64]*proc{}}
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

// proc is a simulated goroutine: one client of the workload, or a
// goroutine that the pipeline started (adopted).
type proc struct {
	w       *world
	id      int           // in order of creation, for the order of pending; 0 for an adopted goroutine until settle queues it
	gid     uint64        // its goroutine's id; 0 until started
	wake    chan struct{} // the scheduler hands it the baton on it
	ev      event         // its wake-up
	body    func()        // nil for an adopted goroutine
	started bool
	client  bool // a client's proc (not adopted)
	done    bool // a client's proc whose body has returned

	asleepOn <-chan struct{} // Done of the context it sleeps on, if in w.asleep
	slot     int             // its index in w.asleep, or -1
	byCtx    bool            // woken because that context ended
	stopped  bool            // woken to unwind at the end of the run
}

// spawn queues a proc that runs body, starting at virtual time at. w.mu
// must be held.
func (w *world) spawnLocked(at time.Duration, body func()) {
	w.nextID++
	p := &proc{w: w, id: w.nextID, wake: make(chan struct{}), body: body, slot: -1, client: true}
	p.ev = event{proc: p, index: -1}
	w.scheduleLocked(&p.ev, at)
}

// state returns whether the run is over and the virtual time.
func (w *world) state() (stopping bool, now time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stopping, w.now
}

// main is the goroutine of p. Once body has returned, it stays, blocked,
// until the end of the run, so that the count of goroutines tells the
// scheduler when the pipeline starts one.
func (p *proc) main() {
	// Known by its goroutine's id before it takes the baton: once step's
	// hand-off is through, step can look at its goroutine.
	w := p.w
	gid := goroutines.Current()
	w.mu.Lock()
	p.gid = gid
	w.procs[gid] = p
	w.mu.Unlock()
	<-p.wake
	defer func() {
		if r := recover(); r != nil {
			w.mu.Lock()
			w.panicked, w.panicVal = true, r
			w.mu.Unlock()
		}
		w.mu.Lock()
		p.done = true
		holds := w.cur == p
		if holds {
			w.cur = nil
		}
		w.mu.Unlock()
		if holds {
			w.yield <- struct{}{}
		}
		<-w.ended
	}()
	p.body()
}

// run takes events from the queue in order until the queue is empty or
// the next event is past end (or, with the queue empty while a call waits
// off the clock, until end), then unwinds the procs still asleep. It
// re-panics a proc's panic.
func (w *world) run(end time.Duration) {
	stop := make(chan struct{})
	defer close(stop)
	defer func() {
		w.mu.Lock()
		w.stopping = true
		w.cancel()
		// Procs still asleep on the clock (where a run given up as stuck
		// leaves them) wake to unwind; so do those waiting for the baton.
		for _, p := range w.procs {
			p.stopped = true
			close(p.wake)
		}
		w.mu.Unlock()
		close(w.ended)
	}()
	stuck := w.watchdog(stop)
	w.sched = goroutines.Current()
	w.group = newGroup(w.sched)
	w.mu.Lock()
	w.created = goroutinesCreated()
	w.mu.Unlock()
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			if !w.stopping && w.waitingLocked() {
				// A call waits off the clock: the end of the run, which ends
				// every call's context, may wake it. The run covers its
				// Duration.
				w.now = end
				w.stopLocked()
				w.mu.Unlock()
				w.settle(stuck)
				continue
			}
			w.mu.Unlock()
			break
		}
		e := heap.Pop(&w.queue).(*event)
		if e.at > end && !w.stopping {
			heap.Push(&w.queue, e)
			w.now = end
			w.stopLocked()
			w.mu.Unlock()
			w.settle(stuck)
			continue
		}
		if !w.stopping {
			w.now = e.at
		}
		w.mu.Unlock()

		switch {
		case e.proc != nil:
			w.step(e.proc, stuck)
			// The call may have cancelled a context that another sleeps on.
			w.ctxMayEnd = true
		case !w.stopping:
			w.callback(e)
			w.ctxMayEnd = w.ctxMayEnd || e.user
		}
		w.settle(stuck)
		w.mu.Lock()
		if w.panicked && !w.stopping {
			w.stopLocked()
			w.mu.Unlock()
			w.settle(stuck)
			continue
		}
		w.mu.Unlock()
	}
	w.mu.Lock()
	panicked, panicVal := w.panicked, w.panicVal
	w.mu.Unlock()
	if panicked {
		panic(panicVal)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waitingLocked() {
		panic("sim: a simulated call blocked on something other than the simulator's clock, which nothing in the run " +
			"would ever wake (a lock or channel of its own?)")
	}
}

// waitingLocked reports whether a client's call is in progress (its
// proc not done): with the queue empty, it waits on something other than
// the clock. w.mu must be held.
func (w *world) waitingLocked() bool {
	for _, p := range w.procs {
		if p.client && !p.done {
			return true
		}
	}
	return false
}

// callback runs e's fn on the scheduler; a panic in it ends the run, as
// a simulated call's does.
func (w *world) callback(e *event) {
	defer func() {
		if r := recover(); r != nil {
			w.mu.Lock()
			w.panicked, w.panicVal = true, r
			w.mu.Unlock()
		}
	}()
	e.fn()
}

// settle makes the run ready for its next event. Unless the run is calm
// (see calmLocked), it waits until every goroutine of the run is blocked:
// those that the last event woke or started have run until they wait
// again, on the clock or on each other. Then it queues the procs that
// asked for the baton meanwhile (pending), in the order they were created,
// and wakes the procs asleep on a context that has ended.
func (w *world) settle(stuck <-chan struct{}) {
	w.mu.Lock()
	if w.calmLocked() {
		check := w.ctxMayEnd
		w.ctxMayEnd = false
		w.mu.Unlock()
		if check {
			w.checkCancelled()
		}
		return
	}
	w.mu.Unlock()
	var wt waiter
	var created uint64
	for {
		// Read before the stacks: a goroutine created after the read is
		// in the snapshot, and none is created once all are blocked.
		created = goroutinesCreated()
		if quiet, _, _ := w.group.quiescent(0); quiet {
			break
		}
		select {
		case <-stuck:
			panic(stuckMessage)
		default:
		}
		wt.wait()
	}
	w.steps.Add(1)
	w.mu.Lock()
	w.created = created
	if len(w.pending) > 0 {
		w.queuePendingLocked()
	}
	// Count the goroutines of the run blocked on something other than
	// the clock, from the last snapshot (in which all were blocked).
	w.outside = 0
	for _, g := range w.group.stacks.Last() {
		if g.ID == w.sched || !w.group.run.Member(g.ID, w.group.byID) {
			continue
		}
		if p := w.procs[g.ID]; p == nil || !p.done && p.ev.index < 0 {
			w.outside++
		}
	}
	for gid, p := range w.procs {
		if w.group.byID[gid] == nil && !p.client {
			delete(w.procs, gid) // an adopted goroutine that is gone
		}
	}
	w.ctxMayEnd = false
	w.mu.Unlock()
	w.checkCancelled()
}

// queuePendingLocked queues the procs that asked for the baton since the
// last settle, at the current time, in the order they were created. Procs
// numbered before keep their numbers; the goroutines adopted since are
// numbered now, after them, by the number of the proc that started them,
// then by goroutine id, not in the order in which they happened to ask:
// Go numbers the goroutines started from one processor in increasing
// order, so the goroutines that a proc starts in a row are numbered in the
// order it started them (unless it moved to another processor between two
// starts). w.mu must be held; the group's last snapshot, in which all the
// goroutines of the run were blocked, names their creators.
func (w *world) queuePendingLocked() {
	type key struct {
		id, creator int
		gid         uint64
	}
	keyOf := func(p *proc) key {
		if p.id != 0 {
			return key{id: p.id}
		}
		k := key{id: math.MaxInt, creator: math.MaxInt, gid: p.gid}
		if s := w.group.byID[p.gid]; s != nil {
			if c := w.procs[s.Parent]; c != nil && c.id != 0 {
				k.creator = c.id
			}
		}
		return k
	}
	slices.SortFunc(w.pending, func(a, b *proc) int {
		ka, kb := keyOf(a), keyOf(b)
		return cmp.Or(cmp.Compare(ka.id, kb.id), cmp.Compare(ka.creator, kb.creator), cmp.Compare(ka.gid, kb.gid))
	})
	for _, p := range w.pending {
		if p.id == 0 {
			w.nextID++
			p.id = w.nextID
		}
		w.scheduleLocked(&p.ev, w.now)
	}
	clear(w.pending)
	w.pending = w.pending[:0]
}

// calmLocked reports whether nothing of the run but the goroutine holding
// the baton (or the scheduler) can be running: no goroutine of the run is
// blocked on anything but the clock (outside), none asked for the baton
// while another held it (pending), and the pipeline started no goroutine
// (no goroutine was created in the process since the last settle, but the
// procs). Then no
// goroutine needs reading the stacks to tell who runs. w.mu must be held.
func (w *world) calmLocked() bool {
	return w.outside == 0 && len(w.pending) == 0 && goroutinesCreated() == w.created
}

// createdSample reads the count of goroutines created in the process.
var createdSample = []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}

// goroutinesCreated returns the count of goroutines created since the
// process started; if the runtime does not report it, a number that
// differs at each call (then every settle reads the stacks).
func goroutinesCreated() uint64 {
	createdMu.Lock()
	defer createdMu.Unlock()
	metrics.Read(createdSample)
	if createdSample[0].Value.Kind() != metrics.KindUint64 {
		createdFallback++
		return createdFallback
	}
	return createdSample[0].Value.Uint64()
}

var (
	createdMu       sync.Mutex
	createdFallback uint64 // guarded by createdMu
)

const stuckMessage = "sim: a simulated call blocked for 10s of wall-clock time on something other than the simulator's clock, or kept running " +
	"without waiting (a lock or channel of its own? a busy loop?)"

// longestPoll is the longest the scheduler waits between two looks at a
// goroutine of the run that keeps running: the spells between looks
// double up to it, so that the looks (each a stack snapshot) cost little
// while a goroutine works for long in wall-clock time, and a goroutine
// that blocks after working for d is seen within about d more.
const longestPoll = 50 * time.Millisecond

// waiter paces the scheduler's polls while goroutines of the pipeline run:
// it yields the processor for the first polls, then sleeps for doubling
// spells, up to longestPoll.
type waiter struct {
	n     int
	sleep time.Duration
}

func (w *waiter) wait() {
	w.n++
	if w.n <= 64 {
		runtime.Gosched()
		return
	}
	w.sleep = min(max(2*w.sleep, time.Microsecond), longestPoll)
	time.Sleep(w.sleep)
}

// stopLocked ends the run: the root context is cancelled, so every
// simulated call's context is done, and every proc asleep is woken (as its
// event comes up) to unwind. w.mu must be held.
func (w *world) stopLocked() {
	w.stopping = true
	w.cancel()
}

// step hands the baton to p until it gives it back: it waits on the
// clock, or ends, or blocks on something else (a hedge waiting for its
// attempts, a bulkhead's queue), or its goroutine exits (an adopted one).
func (w *world) step(p *proc, stuck <-chan struct{}) {
	defer w.steps.Add(1) // progress, for the watchdog
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
		w.mu.Lock()
		w.created++
		w.mu.Unlock()
		go p.main()
	}
	p.wake <- struct{}{}
	if w.timer == nil {
		w.timer = time.NewTimer(time.Hour)
	}
	// Mostly it is back at once; if not, it may be blocked on something
	// other than the clock: look at its stack from time to time.
	// A pipeline with goroutines of its own may well be: spin longer
	// before the first look, rather than wait for a timer.
	spins := 4
	w.mu.Lock()
	if w.adopted || w.outside > 0 {
		spins = 64
	}
	w.mu.Unlock()
	for range spins {
		select {
		case <-w.yield:
			return
		default:
		}
		runtime.Gosched()
	}
	for wait := 50 * time.Microsecond; ; wait = min(2*wait, longestPoll) {
		d := wait
		if spins == 64 && wait == 50*time.Microsecond {
			d = 0 // look at once, then wait the doubling spells
		}
		w.timer.Reset(d)
		select {
		case <-w.yield:
			w.timer.Stop()
			return
		case <-stuck:
			panic(stuckMessage)
		case <-w.timer.C:
		}
		// Not back yet: is it blocked on something other than the clock?
		// (An adopted goroutine that exited is forgotten by the settle
		// that follows.)
		if _, alive, blocked := w.group.quiescent(p.gid); alive && !blocked {
			continue
		}
		w.mu.Lock()
		if w.cur == p {
			w.cur = nil // it will ask for the baton again if it needs it
			w.outside++
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		<-w.yield // it gave the baton back as we looked
		return
	}
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
// order they fell asleep. It runs after each event that may end a context
// (see settle): a call's step (a call cancelling another's context), a
// timeout's AfterFunc, a hedge's winner cancelling the other attempts.
func (w *world) checkCancelled() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := 0; i < len(w.asleep); {
		p := w.asleep[i]
		select {
		case <-p.asleepOn:
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
	p.slot, p.asleepOn = -1, nil
}

// enter makes sure that the calling goroutine holds the baton (or is the
// scheduler, running a callback) before it changes the run's state: a
// goroutine that does not hold it (one the pipeline started, or a client's
// that waited on something other than the clock) becomes a proc, if not
// one yet, and waits until the scheduler hands it the baton, at the
// current virtual time. It returns the proc holding the baton, nil on the
// scheduler.
func (w *world) enter() *proc {
	w.mu.Lock()
	if w.calmLocked() {
		// No goroutine but the procs and the scheduler: the caller is the
		// one that runs, the holder of the baton or the scheduler. (Reading
		// the goroutine's id costs a traceback.)
		p := w.cur
		w.mu.Unlock()
		return p
	}
	w.mu.Unlock()
	gid := goroutines.Current()
	w.mu.Lock()
	if p := w.cur; p != nil && p.gid == gid {
		w.mu.Unlock()
		return p
	}
	if w.cur == nil && gid == w.sched {
		w.mu.Unlock()
		return nil
	}
	p := w.procs[gid]
	if p == nil {
		// Numbered when settle queues it (see queuePendingLocked).
		p = &proc{w: w, gid: gid, wake: make(chan struct{}), slot: -1, started: true}
		w.adopted = true
		p.ev = event{proc: p, index: -1}
		w.procs[gid] = p
	}
	w.pending = append(w.pending, p)
	w.mu.Unlock()
	select {
	case <-p.wake:
	case <-w.ended: // the run is over: the caller unwinds
	}
	return p
}

// sleep puts the current proc to sleep for d or until ctx ends; see
// simClock.Sleep.
func (w *world) sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil || d <= 0 {
		return err
	}
	p := w.enter()
	if p == nil {
		panic("sim: Sleep called outside a simulated call (from Build or an AfterFunc callback), or by a call that something " +
			"outside the run woke (a wait on the real clock: time.After, time.NewTimer, a context's deadline?)")
	}
	w.mu.Lock()
	if w.stopping {
		w.mu.Unlock()
		return context.Canceled
	}
	if err := ctx.Err(); err != nil {
		w.mu.Unlock()
		return err
	}
	w.scheduleLocked(&p.ev, w.after(d))
	if done := ctx.Done(); done != nil && done != w.rootDone {
		p.asleepOn, p.slot = done, len(w.asleep)
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

// NewTimer returns a timer whose channel gets the virtual time d from now
// (a bulkhead queue's MaxWait). A goroutine that waits on its channel
// waits outside the clock: from then on the scheduler waits, after each
// event, until every goroutine of the run is blocked (see world.settle).
func (c simClock) NewTimer(d time.Duration) clock.Timer {
	c.w.enter()
	t := &simTimer{w: c.w, c: make(chan time.Time, 1)}
	t.ev = event{fn: t.fire, index: -1}
	c.w.mu.Lock()
	c.w.scheduleLocked(&t.ev, c.w.after(d))
	c.w.mu.Unlock()
	return t
}

// AfterFunc queues f to run at now+d of virtual time, on the scheduler,
// between steps of the simulated calls.
func (c simClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	if f == nil {
		panic("sim: AfterFunc with nil func")
	}
	c.w.enter()
	t := &simTimer{w: c.w}
	t.ev = event{fn: f, user: true, index: -1}
	c.w.mu.Lock()
	c.w.scheduleLocked(&t.ev, c.w.after(d))
	c.w.mu.Unlock()
	return t
}

// simTimer is the Timer of an AfterFunc or a NewTimer; c is nil for an
// AfterFunc.
type simTimer struct {
	w  *world
	ev event
	c  chan time.Time
}

func (t *simTimer) C() <-chan time.Time { return t.c }

// fire sends the virtual time on the channel of a NewTimer, on the
// scheduler.
func (t *simTimer) fire() {
	select {
	case t.c <- epoch.Add(t.w.now):
	default:
	}
}

// drain takes a value sent and not received: after Stop or Reset, no
// value sent before is received (Go 1.23+ timers).
func (t *simTimer) drain() {
	if t.c != nil {
		select {
		case <-t.c:
		default:
		}
	}
}

func (t *simTimer) Stop() bool {
	t.w.enter()
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	t.drain()
	return t.w.unscheduleLocked(&t.ev)
}

func (t *simTimer) Reset(d time.Duration) bool {
	t.w.enter()
	t.w.mu.Lock()
	defer t.w.mu.Unlock()
	t.drain()
	active := t.w.unscheduleLocked(&t.ev)
	t.w.scheduleLocked(&t.ev, t.w.after(d))
	return active
}
