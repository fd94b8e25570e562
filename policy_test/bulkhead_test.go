package policytest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/telemetry"
)

// bhCaller is one caller of the bulkhead under test: a goroutine blocked in
// Acquire, or the holder of a slot (done is nil for TryAcquire holders).
type bhCaller struct {
	id     int
	cancel context.CancelFunc
	done   chan error
	queued time.Time // when it joined the queue, on the fake clock
}

// bhMachine runs a real Bulkhead beside a reference model: a limit on
// slots (changed by SetLimit), a list of holders and a FIFO queue. It runs
// inside a synctest bubble so that after each action it can wait until
// every caller goroutine has either returned or blocked.
type bhMachine struct {
	b             *bulkhead.Bulkhead
	fake          *clock.Fake
	events        *telemetry.Counter // the bulkhead's observer
	rejected      int                // refusals the model expects, of every kind
	max, maxQueue int                // max is the limit now
	// ceiling bounds the holders: max, or after SetLimit lowered max below
	// the holders then, those holders, falling with each release until it
	// reaches max (and stays there).
	ceiling           int
	maxWait           time.Duration
	holders, queue    []*bhCaller // the model
	all               []*bhCaller // every caller, to end them all on failure
	nextID            int
	trace             []string // what happened, for failure messages
	grantedOnRelease  int      // coverage: releases that handed a slot on
	cancelledInQueue  int
	timedOutInQueue   int
	refusedWhenFull   int
	releaseCancelRace int
	doneCtx           int
	grantedOnRaise    int    // slots SetLimit handed to queued callers
	loweredBelowHeld  int    // SetLimit calls that left more holders than slots
	progress          func() // tells the stall watchdog the model moves on
}

func newBhMachine(t *rapid.T) *bhMachine {
	m := &bhMachine{
		fake:     clock.NewFake(),
		events:   telemetry.NewCounter(),
		max:      rapid.IntRange(1, 3).Draw(t, "max"),
		maxQueue: rapid.IntRange(0, 3).Draw(t, "maxQueue"),
	}
	m.ceiling = m.max
	if m.maxQueue > 0 && rapid.Bool().Draw(t, "withMaxWait") {
		m.maxWait = time.Duration(rapid.IntRange(1, 3).Draw(t, "maxWaitSeconds")) * time.Second
	}
	m.b = bulkhead.New(m.max, bulkhead.WithConfig(bulkhead.Config{MaxQueue: m.maxQueue, MaxWait: m.maxWait}), // 0: no queue, no limit
		bulkhead.WithClock(m.fake), bulkhead.WithName("model"), bulkhead.WithObserver(m.events))
	return m
}

func (m *bhMachine) logf(format string, args ...any) {
	m.trace = append(m.trace, fmt.Sprintf(format, args...))
}

// outcome reads c's result without blocking: "acquired", an error
// message, or "waiting".
func bhOutcome(c *bhCaller) string {
	select {
	case err := <-c.done:
		if err == nil {
			return "acquired"
		}
		return err.Error()
	default:
		return "waiting"
	}
}

// expect checks that c's Acquire returned with want.
func (m *bhMachine) expect(t *rapid.T, c *bhCaller, want string) {
	t.Helper()
	if got := bhOutcome(c); got != want {
		t.Fatalf("caller %d: got %q, want %q\ntrace:\n%v", c.id, got, want, m.trace)
	}
}

// grantHead moves the first queued caller to the holders and checks that
// it was served.
func (m *bhMachine) grantHead(t *rapid.T) {
	head := m.queue[0]
	m.queue = m.queue[1:]
	m.holders = append(m.holders, head)
	m.expect(t, head, "acquired")
}

// released updates the model after a slot came back: the ceiling falls
// with the holders, and the head of the queue, if any, gets the slot if
// the holders are below the limit.
func (m *bhMachine) released(t *rapid.T) {
	m.ceiling = max(m.max, min(m.ceiling, len(m.holders)))
	if len(m.queue) > 0 && len(m.holders) < m.max {
		m.grantedOnRelease++
		m.grantHead(t)
	}
}

func (m *bhMachine) Acquire(t *rapid.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if rapid.IntRange(0, 5).Draw(t, "doneCtx") == 0 {
		cancel()
	}
	c := &bhCaller{id: m.nextID, cancel: cancel, done: make(chan error, 1), queued: m.fake.Now()}
	m.nextID++
	m.all = append(m.all, c)
	m.logf("caller %d: Acquire (ctx done: %v)", c.id, ctx.Err() != nil)
	go func() { c.done <- m.b.Acquire(ctx) }()
	synctest.Wait()
	switch {
	case ctx.Err() != nil: // looked at first: no slot, no queue, no refusal
		m.doneCtx++
		m.expect(t, c, context.Canceled.Error())
	case len(m.holders) < m.max && len(m.queue) == 0:
		m.holders = append(m.holders, c)
		m.expect(t, c, "acquired")
	case len(m.queue) >= m.maxQueue:
		m.refusedWhenFull++
		m.rejected++
		m.expect(t, c, "bulkhead: full (model)")
	default:
		m.queue = append(m.queue, c)
		m.expect(t, c, "waiting")
	}
}

func (m *bhMachine) TryAcquire(t *rapid.T) {
	got := m.b.TryAcquire()
	m.logf("TryAcquire = %v", got)
	want := len(m.holders) < m.max && len(m.queue) == 0
	if got != want {
		t.Fatalf("TryAcquire = %v, want %v\ntrace:\n%v", got, want, m.trace)
	}
	if got {
		m.holders = append(m.holders, &bhCaller{id: -1, cancel: func() {}})
	} else {
		m.rejected++
	}
}

func (m *bhMachine) Release(t *rapid.T) {
	if len(m.holders) == 0 {
		t.Skip("nobody holds a slot")
	}
	i := rapid.IntRange(0, len(m.holders)-1).Draw(t, "holder")
	m.logf("holder %d: Release", m.holders[i].id)
	m.holders = append(m.holders[:i], m.holders[i+1:]...)
	m.b.Release()
	synctest.Wait()
	m.released(t)
}

// SetLimit changes the limit: raised, the queued callers it makes room for
// are admitted at once, in order; lowered, nothing is revoked.
func (m *bhMachine) SetLimit(t *rapid.T) {
	n := rapid.IntRange(1, 4).Draw(t, "limit")
	m.logf("SetLimit(%d) with %d held, %d queued", n, len(m.holders), len(m.queue))
	m.b.SetLimit(n)
	synctest.Wait()
	m.max = n
	m.ceiling = max(n, len(m.holders))
	if len(m.holders) > n {
		m.loweredBelowHeld++
	}
	for len(m.queue) > 0 && len(m.holders) < n {
		m.grantedOnRaise++
		m.grantHead(t)
	}
}

func (m *bhMachine) CancelQueued(t *rapid.T) {
	if len(m.queue) == 0 {
		t.Skip("nobody is queued")
	}
	i := rapid.IntRange(0, len(m.queue)-1).Draw(t, "queued")
	c := m.queue[i]
	m.logf("queued caller %d: cancel", c.id)
	m.queue = append(m.queue[:i], m.queue[i+1:]...)
	c.cancel()
	synctest.Wait()
	m.cancelledInQueue++
	m.expect(t, c, context.Canceled.Error())
}

// CancelHolder ends the context of a caller that holds a slot: that changes
// nothing, the slot is held until released.
func (m *bhMachine) CancelHolder(t *rapid.T) {
	if len(m.holders) == 0 {
		t.Skip("nobody holds a slot")
	}
	c := m.holders[rapid.IntRange(0, len(m.holders)-1).Draw(t, "holder")]
	m.logf("holder %d: cancel", c.id)
	c.cancel()
	synctest.Wait()
}

// ReleaseAsHeadCancels releases a slot at the moment the first queued
// caller's context ends, without letting it run in between: the slot goes
// to the caller or on past it, whichever wins the race, but is never lost.
// The head must return context.Canceled (it had already woken on ctx.Done
// before the slot could reach it), so the slot ends with the next in line.
func (m *bhMachine) ReleaseAsHeadCancels(t *rapid.T) {
	if len(m.queue) == 0 || len(m.holders) == 0 {
		t.Skip("needs a holder and a queued caller")
	}
	head := m.queue[0]
	i := rapid.IntRange(0, len(m.holders)-1).Draw(t, "holder")
	m.logf("holder %d: Release as queued caller %d cancels", m.holders[i].id, head.id)
	m.holders = append(m.holders[:i], m.holders[i+1:]...)
	head.cancel()
	m.b.Release()
	synctest.Wait()
	m.releaseCancelRace++
	m.queue = m.queue[1:]
	m.expect(t, head, context.Canceled.Error())
	m.released(t)
}

func (m *bhMachine) Advance(t *rapid.T) {
	m.advance(t, time.Duration(rapid.IntRange(1, 3000).Draw(t, "ms"))*time.Millisecond)
}

// AdvanceToTimeout moves the clock to the moment the first queued caller
// has waited MaxWait.
func (m *bhMachine) AdvanceToTimeout(t *rapid.T) {
	if m.maxWait == 0 || len(m.queue) == 0 {
		t.Skip("nobody can time out")
	}
	m.advance(t, m.queue[0].queued.Add(m.maxWait).Sub(m.fake.Now()))
}

// advance moves the clock by d and checks that exactly the queued callers
// that have waited MaxWait by then were refused.
func (m *bhMachine) advance(t *rapid.T, d time.Duration) {
	m.logf("advance %v", d)
	m.fake.Advance(d)
	synctest.Wait()
	if m.maxWait == 0 {
		return
	}
	var left []*bhCaller
	for _, c := range m.queue {
		if m.fake.Now().Sub(c.queued) >= m.maxWait {
			m.timedOutInQueue++
			m.rejected++
			m.expect(t, c, "bulkhead: full, MaxWait spent in the queue (model)")
		} else {
			left = append(left, c)
		}
	}
	m.queue = left
}

// Check runs after every action: the metrics match the model, within the
// bounds, and every caller the model has queued is still waiting. The
// bound on the calls running is the limit, or after SetLimit lowered it,
// max(limit, the calls running at the change), falling to the limit as
// they release; once at the limit, it stays there.
func (m *bhMachine) Check(t *rapid.T) {
	m.progress()
	type counts struct{ Limit, InFlight, Queued int }
	want := counts{m.max, len(m.holders), len(m.queue)}
	got := counts{m.b.Limit(), m.b.InFlight(), m.b.Queued()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("counts mismatch (-want +got):\n%s\ntrace:\n%v", diff, m.trace)
	}
	if got.InFlight > m.ceiling || got.Queued > m.maxQueue {
		t.Fatalf("counts %+v beyond ceiling %d (limit %d), queue %d\ntrace:\n%v", got, m.ceiling, m.max, m.maxQueue, m.trace)
	}
	if len(m.queue) > 0 && got.InFlight < m.max {
		t.Fatalf("%d callers queued with %d of %d slots held\ntrace:\n%v", got.Queued, got.InFlight, m.max, m.trace)
	}
	for _, c := range m.queue {
		m.expect(t, c, "waiting")
	}
	// The lifetime count of refusals, in Stats and in events alike, is
	// the model's: one per refusal, of every kind.
	wantStats := bulkhead.Stats{Limit: m.max, InFlight: len(m.holders), Queued: len(m.queue), Refused: uint64(m.rejected)}
	if diff := cmp.Diff(wantStats, m.b.Stats()); diff != "" {
		t.Fatalf("Stats mismatch (-want +got):\n%s\ntrace:\n%v", diff, m.trace)
	}
	if n := m.events.Count("model", bulkhead.EventRefused); n != uint64(m.rejected) {
		t.Fatalf("%d bulkhead.refused events, want %d\ntrace:\n%v", n, m.rejected, m.trace)
	}
}

// stop ends every caller goroutine still blocked, whatever state a failed
// check left them in: the bubble must end with none.
func (m *bhMachine) stop() {
	for _, c := range m.all {
		c.cancel()
	}
	synctest.Wait()
}

// drain releases every slot and cancels every queued caller, so that the
// bubble ends with no goroutine left, and checks that every slot came back.
func (m *bhMachine) drain(t *rapid.T) {
	for _, c := range m.queue {
		c.cancel()
	}
	synctest.Wait()
	m.queue = nil
	for range m.holders {
		m.b.Release()
	}
	m.holders = nil
	if m.b.InFlight() != 0 || m.b.Queued() != 0 {
		t.Fatalf("after draining: InFlight %d, Queued %d", m.b.InFlight(), m.b.Queued())
	}
}

// TestBulkheadMatchesModel: under random schedules of acquire (sometimes
// with a context already done, which gets ctx.Err() whatever the state),
// try-acquire, release, cancellation (queued callers and holders), releases
// racing a cancellation, clock advances past MaxWait, and SetLimit raising
// or lowering the limit, the bulkhead matches the model after every step:
// running <= max (or, after a lowered limit, <= max(limit, running at the
// change), converging to the limit), queued <= queue, nobody queued while a
// slot is free, FIFO order (exactly the head is served on release or on a
// raised limit), no slot lost or duplicated.
func TestBulkheadMatchesModel(t *testing.T) {
	var total bhMachine // coverage counters, summed over all checks
	progress, stop := stallWatchdog(t.Name())
	defer stop()
	synctest.Test(t, func(t *testing.T) {
		// rapid asks a *testing.T for its deadline, which a bubble forbids;
		// wrapped, it is only a rapid.TB.
		rapid.Check(struct{ *testing.T }{t}, func(rt *rapid.T) {
			m := newBhMachine(rt)
			m.progress = progress
			defer m.stop()
			rt.Repeat(rapid.StateMachineActions(m))
			m.drain(rt)
			total.grantedOnRelease += m.grantedOnRelease
			total.cancelledInQueue += m.cancelledInQueue
			total.timedOutInQueue += m.timedOutInQueue
			total.refusedWhenFull += m.refusedWhenFull
			total.releaseCancelRace += m.releaseCancelRace
			total.doneCtx += m.doneCtx
			total.grantedOnRaise += m.grantedOnRaise
			total.loweredBelowHeld += m.loweredBelowHeld
		})
	})
	t.Logf("coverage: %d slots handed on, %d cancelled in queue, %d timed out, %d refused, %d release/cancel races, %d done contexts, %d slots handed on by a raised limit, %d limits lowered below the calls running",
		total.grantedOnRelease, total.cancelledInQueue, total.timedOutInQueue, total.refusedWhenFull, total.releaseCancelRace, total.doneCtx, total.grantedOnRaise, total.loweredBelowHeld)
	if !t.Failed() && (total.grantedOnRelease == 0 || total.cancelledInQueue == 0 || total.timedOutInQueue == 0 || total.releaseCancelRace == 0 || total.doneCtx == 0 || total.grantedOnRaise == 0 || total.loweredBelowHeld == 0) {
		t.Error("the schedules never reached some of the actions")
	}
}

// stallPatience is how long, in real time, a model may go without finishing
// a step before stallWatchdog ends the run: far beyond any step's cost,
// even under -race on a loaded machine.
const stallPatience = time.Minute

// stallWatchdog bounds a model's run where no select can: a goroutine stuck
// on a lock or spinning is not durably blocked, so inside a synctest bubble
// synctest.Wait waits for it for ever, and outside one the test's own
// goroutine may be the one stuck. Call progress after each step; if
// stallPatience of real time passes without a call, the test binary ends
// with a panic naming test. Start it outside any bubble, so that it runs on
// real time; stop it when the run ends.
func stallWatchdog(test string) (progress, stop func()) {
	var steps atomic.Int64
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(stallPatience)
		defer tick.Stop()
		last := int64(-1)
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				n := steps.Load()
				if n == last {
					panic(fmt.Sprintf("%s: no step finished in %v (after %d steps): a call never returned "+
						"(a goroutine stuck on a lock or spinning is not durably blocked, so synctest cannot report it)", test, stallPatience, n))
				}
				last = n
			}
		}
	}()
	return func() { steps.Add(1) }, func() { close(done) }
}
