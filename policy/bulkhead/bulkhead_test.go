package bulkhead_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
)

// counts is what the metrics report.
type counts struct{ InFlight, Queued int }

func countsOf(b *bulkhead.Bulkhead) counts { return counts{b.InFlight(), b.Queued()} }

func checkCounts(t *testing.T, b *bulkhead.Bulkhead, want counts) {
	t.Helper()
	if diff := cmp.Diff(want, countsOf(b)); diff != "" {
		t.Fatalf("counts mismatch (-want +got):\n%s", diff)
	}
}

// acquire starts b.Acquire(ctx) in a goroutine, waits (in a synctest
// bubble) until it has returned or blocked, and returns the channel that
// gets its result.
func acquire(ctx context.Context, b *bulkhead.Bulkhead) <-chan error {
	done := make(chan error, 1)
	go func() { done <- b.Acquire(ctx) }()
	synctest.Wait()
	return done
}

// result returns what done holds, or "waiting".
func result(done <-chan error) string {
	select {
	case err := <-done:
		if err == nil {
			return "acquired"
		}
		return err.Error()
	default:
		return "waiting"
	}
}

func TestAtMostMaxConcurrentThenFull(t *testing.T) {
	b := bulkhead.New(3, bulkhead.WithName("db"))
	for i := range 3 {
		if err := b.Acquire(t.Context()); err != nil {
			t.Fatalf("Acquire %d = %v", i, err)
		}
	}
	checkCounts(t, b, counts{3, 0})
	err := b.Acquire(t.Context())
	if !errors.Is(err, bulkhead.ErrFull) || !errors.Is(err, resilience.ErrRefused) {
		t.Fatalf("Acquire beyond max = %v, want ErrFull and ErrRefused", err)
	}
	var re *resilience.RefusedError
	if !errors.As(err, &re) || re.Name() != "db" || re.Reason() != bulkhead.ErrFull {
		t.Fatalf("Acquire beyond max = %#v, want a refusal of db for ErrFull", err)
	}
	if b.TryAcquire() {
		t.Fatal("TryAcquire succeeded with every slot held")
	}
	checkCounts(t, b, counts{3, 0})
	b.Release()
	if !b.TryAcquire() {
		t.Fatal("TryAcquire failed with a slot free")
	}
	checkCounts(t, b, counts{3, 0})
}

func TestErrorMessages(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{bulkhead.ErrFull, "bulkhead: full"},
		{bulkhead.ErrQueueTimeout, "bulkhead: full, MaxWait spent in the queue"},
		{resilience.Refuse(bulkhead.ErrFull, "", -1), "bulkhead: full"},
		{resilience.Refuse(bulkhead.ErrFull, "db", -1), "bulkhead: full (db)"},
		{resilience.Refuse(bulkhead.ErrQueueTimeout, "db", -1), "bulkhead: full, MaxWait spent in the queue (db)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if !errors.Is(tt.err, bulkhead.ErrFull) || !errors.Is(tt.err, resilience.ErrRefused) {
			t.Errorf("%q does not match ErrFull and ErrRefused", tt.want)
		}
	}
	b := bulkhead.New(1)
	_ = b.TryAcquire()
	if _, ok := resilience.RetryAfter(b.Acquire(t.Context())); ok {
		t.Error("a bulkhead's refusal gives a Retry-After hint; a bulkhead has none to give")
	}
}

func TestQueueIsFIFO(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(1, bulkhead.WithMaxQueue(3))
		if err := b.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		var waiters []<-chan error
		for range 3 {
			waiters = append(waiters, acquire(t.Context(), b))
		}
		checkCounts(t, b, counts{1, 3})
		for i := range waiters {
			b.Release()
			synctest.Wait()
			var got []string
			for _, w := range waiters[i:] {
				got = append(got, result(w))
			}
			want := []string{"acquired"}
			for range waiters[i+1:] {
				want = append(want, "waiting")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("after release %d: mismatch (-want +got):\n%s", i, diff)
			}
			checkCounts(t, b, counts{1, len(waiters) - i - 1})
		}
		b.Release()
		checkCounts(t, b, counts{0, 0})
	})
}

func TestQueueFullRefusesAtOnce(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(1, bulkhead.WithMaxQueue(1), bulkhead.WithName("db"))
		_ = b.Acquire(t.Context())
		w := acquire(t.Context(), b)
		if got := result(acquire(t.Context(), b)); got != "bulkhead: full (db)" {
			t.Fatalf("third caller: %s, want refused at once", got)
		}
		checkCounts(t, b, counts{1, 1})
		b.Release()
		synctest.Wait()
		if got := result(w); got != "acquired" {
			t.Fatalf("queued caller: %s", got)
		}
		b.Release()
	})
}

func TestCancelledWaiterLeavesAtOnceAndTakesNoSlot(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(1, bulkhead.WithMaxQueue(3))
		_ = b.Acquire(t.Context())
		first := acquire(t.Context(), b)
		ctx, cancel := context.WithCancel(t.Context())
		middle := acquire(ctx, b)
		last := acquire(t.Context(), b)
		checkCounts(t, b, counts{1, 3})

		cancel()
		synctest.Wait()
		if got := result(middle); got != context.Canceled.Error() {
			t.Fatalf("cancelled caller: %s, want context canceled", got)
		}
		checkCounts(t, b, counts{1, 2})

		b.Release()
		synctest.Wait()
		if diff := cmp.Diff([]string{"acquired", "waiting"}, []string{result(first), result(last)}); diff != "" {
			t.Fatalf("mismatch (-want +got):\n%s", diff)
		}
		b.Release()
		synctest.Wait()
		if got := result(last); got != "acquired" {
			t.Fatalf("last caller: %s", got)
		}
		b.Release()
		checkCounts(t, b, counts{0, 0})
	})
}

func TestDeadlineWhileQueued(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(1, bulkhead.WithMaxQueue(1))
		_ = b.Acquire(t.Context())
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		if err := b.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire = %v, want DeadlineExceeded", err)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Fatalf("waited %v, want 1s", waited)
		}
		checkCounts(t, b, counts{1, 0})
		b.Release()
	})
}

// A caller whose context is already done gets ctx.Err() and takes no slot,
// joins no queue and is not counted as refused, whether a slot is free, it
// would queue, or the queue is full: its ctx is looked at first, as
// golang.org/x/sync/semaphore does.
func TestAcquireDoneContext(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(1, bulkhead.WithMaxQueue(1))
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.Acquire(ctx); err != context.Canceled {
			t.Fatalf("Acquire with a free slot = %v, want context.Canceled", err)
		}
		checkCounts(t, b, counts{0, 0})
		_ = b.TryAcquire()
		if err := b.Acquire(ctx); err != context.Canceled {
			t.Fatalf("Acquire that would queue = %v, want context.Canceled", err)
		}
		checkCounts(t, b, counts{1, 0})
		queued := acquire(t.Context(), b)
		if err := b.Acquire(ctx); err != context.Canceled {
			t.Fatalf("Acquire with the queue full = %v, want context.Canceled", err)
		}
		checkCounts(t, b, counts{1, 1})
		dctx, dcancel := context.WithDeadline(t.Context(), time.Now())
		defer dcancel()
		if err := b.Acquire(dctx); err != context.DeadlineExceeded {
			t.Fatalf("Acquire past its deadline = %v, want context.DeadlineExceeded", err)
		}
		b.Release()
		synctest.Wait()
		if got := result(queued); got != "acquired" {
			t.Fatalf("queued caller: %s", got)
		}
		b.Release()
		checkCounts(t, b, counts{0, 0})
	})
}

// endedCtx is a context that has ended (Err is non-nil) before its Done
// channel is seen closed: what a queued caller sees when its ctx ends at
// the moment a slot is handed to it, made deterministic. Done never closes.
type endedCtx struct {
	context.Context
	ended atomic.Bool
}

func (c *endedCtx) Err() error {
	if c.ended.Load() {
		return context.Canceled
	}
	return c.Context.Err()
}

// A queued caller handed a slot after its ctx ended gives the slot on to
// the next in line and returns ctx.Err(): Acquire never returns a slot to a
// caller whose ctx had ended when the slot reached it.
func TestSlotHandedAfterContextEndedGoesOn(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(1, bulkhead.WithMaxQueue(2))
		_ = b.TryAcquire()
		ctx := &endedCtx{Context: t.Context()}
		first := acquire(ctx, b)
		next := acquire(t.Context(), b)
		checkCounts(t, b, counts{1, 2})
		ctx.ended.Store(true)
		b.Release() // the slot reaches first, whose ctx has ended
		synctest.Wait()
		if diff := cmp.Diff([]string{context.Canceled.Error(), "acquired"}, []string{result(first), result(next)}); diff != "" {
			t.Fatalf("mismatch (-want +got):\n%s", diff)
		}
		checkCounts(t, b, counts{1, 0})
		b.Release()
	})
}

// The policy looks at ctx before anything else, as breaker.Policy and
// ratelimit.Policy do: a call whose caller has already given up returns
// ctx.Err() and runs nothing.
func TestPolicyDoneContextDoesNotRun(t *testing.T) {
	b := bulkhead.New(1)
	p := bulkhead.Policy[int](b)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	_, err := p.Do(ctx, func(context.Context) (int, error) { ran = true; return 1, nil })
	if err != context.Canceled || ran {
		t.Fatalf("Do(done ctx): err %v, op ran %v; want context.Canceled and not run", err, ran)
	}
	checkCounts(t, b, counts{0, 0})
}

// cancelOnErr is a context whose Err, the first time it is called, runs
// hook: the waiter calls Err after it has seen Done and before it takes the
// bulkhead's lock, which is exactly where a Release can hand it a slot.
type cancelOnErr struct {
	context.Context
	once sync.Once
	hook func()
}

func (c *cancelOnErr) Err() error {
	err := c.Context.Err()
	if err != nil {
		c.once.Do(c.hook)
	}
	return err
}

// Regression guard for the race between a slot being handed to a queued
// caller and that caller's context ending: the slot must go on to the next
// in line, not be lost.
func TestSlotHandedToCancelledWaiterGoesOn(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(1, bulkhead.WithMaxQueue(2))
		_ = b.Acquire(t.Context())
		parent, cancel := context.WithCancel(t.Context())
		ctx := &cancelOnErr{Context: parent, hook: b.Release}
		racing := acquire(ctx, b)
		next := acquire(t.Context(), b)
		checkCounts(t, b, counts{1, 2})

		cancel() // the racing caller wakes; its Err() releases the held slot to it
		synctest.Wait()
		if diff := cmp.Diff([]string{context.Canceled.Error(), "acquired"}, []string{result(racing), result(next)}); diff != "" {
			t.Fatalf("mismatch (-want +got):\n%s", diff)
		}
		checkCounts(t, b, counts{1, 0})
		b.Release()
		checkCounts(t, b, counts{0, 0})
	})
}

func TestMaxWait(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := clock.NewFake()
		b := bulkhead.New(1, bulkhead.WithMaxQueue(2), bulkhead.WithMaxWait(time.Second),
			bulkhead.WithClock(fake), bulkhead.WithName("db"))
		_ = b.Acquire(t.Context())
		early := acquire(t.Context(), b)
		fake.Advance(600 * time.Millisecond)
		late := acquire(t.Context(), b)
		fake.Advance(399 * time.Millisecond)
		synctest.Wait()
		checkCounts(t, b, counts{1, 2})

		fake.Advance(time.Millisecond) // early has waited 1s
		synctest.Wait()
		err := <-early
		var re *resilience.RefusedError
		if !errors.As(err, &re) || re.Name() != "db" || re.Reason() != bulkhead.ErrQueueTimeout {
			t.Fatalf("early caller: %#v, want db's refusal for ErrQueueTimeout after 1s", err)
		}
		if got := result(late); got != "waiting" {
			t.Fatalf("late caller: %s", got)
		}
		b.Release()
		synctest.Wait()
		if got := result(late); got != "acquired" {
			t.Fatalf("late caller: %s", got)
		}
		if fake.Waiters() != 0 {
			t.Fatalf("%d timers left armed", fake.Waiters())
		}
		b.Release()
	})
}

// Without WithClock, MaxWait is measured on the real clock; its least
// value, 1ns, is a wait too.
func TestMaxWaitOnTheRealClock(t *testing.T) {
	for _, wait := range []time.Duration{time.Second, time.Nanosecond} {
		bubble(t, func(t *testing.T) {
			b := bulkhead.New(1, bulkhead.WithMaxQueue(1), bulkhead.WithMaxWait(wait))
			_ = b.Acquire(t.Context())
			start := time.Now()
			err := b.Acquire(t.Context())
			if !errors.Is(err, bulkhead.ErrQueueTimeout) || time.Since(start) != wait {
				t.Errorf("MaxWait %v: queued caller: %v after %v, want ErrQueueTimeout after %v", wait, err, time.Since(start), wait)
			}
			b.Release()
		})
	}
}

// When MaxWait runs out at the moment a slot arrives, the caller either
// keeps the slot or is refused and the slot stays free: it is never lost.
func TestMaxWaitRacingRelease(t *testing.T) {
	bubble(t, func(t *testing.T) {
		fake := clock.NewFake()
		b := bulkhead.New(1, bulkhead.WithMaxQueue(1), bulkhead.WithMaxWait(time.Second), bulkhead.WithClock(fake))
		outcomes := map[string]int{}
		for range 200 {
			_ = b.Acquire(t.Context())
			w := acquire(t.Context(), b)
			fake.Advance(time.Second) // the waiter's timer fires...
			b.Release()               // ...as the slot comes back
			synctest.Wait()
			got := result(w)
			outcomes[got]++
			switch got {
			case "acquired":
				checkCounts(t, b, counts{1, 0})
				b.Release()
			case "bulkhead: full, MaxWait spent in the queue":
				checkCounts(t, b, counts{0, 0})
			default:
				t.Fatalf("outcome %q", got)
			}
		}
		t.Logf("outcomes: %v", outcomes)
	})
}

func TestReleaseWithoutSlotPanics(t *testing.T) {
	for _, queue := range []int{0, 1} {
		b := bulkhead.New(2, bulkhead.WithMaxQueue(queue))
		func() {
			defer func() {
				if r := recover(); r != "bulkhead: Release without a held slot" {
					t.Fatalf("Release on an idle bulkhead: panic %v", r)
				}
			}()
			b.Release()
		}()
		checkCounts(t, b, counts{0, 0})
	}
}

func TestZeroAllocs(t *testing.T) {
	// The deadline bounds an Acquire that would wait for a lost slot.
	ctx, cancel := context.WithTimeout(t.Context(), patience)
	defer cancel()
	b := bulkhead.New(4, bulkhead.WithMaxQueue(4))
	full := bulkhead.New(1)
	_ = full.TryAcquire()
	p := bulkhead.Policy[int](b)
	op := func(context.Context) (int, error) { return 1, nil }
	tests := map[string]func(){
		"Acquire+Release": func() {
			if err := b.Acquire(ctx); err != nil {
				panic(fmt.Sprint("Acquire of a free slot: ", err))
			}
			b.Release()
		},
		"TryAcquire+Release": func() {
			if !b.TryAcquire() {
				panic("refused")
			}
			b.Release()
		},
		"refusal": func() {
			if full.Acquire(ctx) == nil {
				panic("admitted")
			}
		},
		"Policy.Do": func() { _, _ = p.Do(ctx, op) },
	}
	for name, f := range tests {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocs, want 0", name, n)
		}
	}
}

func TestPolicy(t *testing.T) {
	b := bulkhead.New(1, bulkhead.WithName("db"))
	p := bulkhead.Policy[string](b)
	if got := p.String(); got != "bulkhead(db)" {
		t.Fatalf("String() = %q", got)
	}
	if got := bulkhead.Policy[int](bulkhead.New(1)).String(); got != "bulkhead" {
		t.Fatalf("unnamed String() = %q", got)
	}
	v, err := p.Do(t.Context(), func(context.Context) (string, error) {
		checkCounts(t, b, counts{1, 0})
		return "ok", nil
	})
	if v != "ok" || err != nil {
		t.Fatalf("Do = %q, %v", v, err)
	}
	checkCounts(t, b, counts{0, 0})

	// A failing op gives the slot back too, and its error passes through.
	boom := errors.New("boom")
	if _, err := p.Do(t.Context(), func(context.Context) (string, error) { return "", boom }); err != boom {
		t.Fatalf("Do = %v, want boom", err)
	}
	checkCounts(t, b, counts{0, 0})

	// A refused call does not run the op.
	_ = b.TryAcquire()
	ran := false
	_, err = p.Do(t.Context(), func(context.Context) (string, error) { ran = true; return "", nil })
	if ran || !errors.Is(err, bulkhead.ErrFull) {
		t.Fatalf("Do on a full bulkhead: ran %v, err %v", ran, err)
	}
	b.Release()
}

// The policy describes its layer by the longest a call waits for a slot:
// 0 without a queue, MaxWait with one, Off (no bound but the context) with
// a queue and no MaxWait.
func TestPolicyLayer(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    *bulkhead.Bulkhead
		want time.Duration
	}{
		{"no queue", bulkhead.New(1), 0},
		{"queue and MaxWait", bulkhead.New(1, bulkhead.WithMaxQueue(1), bulkhead.WithMaxWait(time.Nanosecond)), time.Nanosecond},
		{"queue", bulkhead.New(1, bulkhead.WithMaxQueue(1)), resilience.Off},
	} {
		want := []resilience.Layer{{Name: "bulkhead", Kind: resilience.KindBulkhead, MaxWait: tc.want}}
		if diff := cmp.Diff(want, bulkhead.Policy[int](tc.b).Layers()); diff != "" {
			t.Errorf("%s: Layers mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestPolicyReleasesOnPanic(t *testing.T) {
	b := bulkhead.New(1)
	p := bulkhead.Policy[int](b)
	pv := &struct{ x int }{42}
	func() {
		defer func() {
			if r := recover(); r != pv {
				t.Fatalf("recovered %v, want the op's panic value", r)
			}
		}()
		_, _ = p.Do(t.Context(), func(context.Context) (int, error) { panic(pv) })
	}()
	checkCounts(t, b, counts{0, 0})
}

func TestPolicyNilPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "bulkhead: Policy of a nil *Bulkhead" {
			t.Fatalf("panic %v", r)
		}
	}()
	bulkhead.Policy[int](nil)
}

// peakMeter counts the calls running at once and keeps the largest count
// seen. Safe for concurrent use.
type peakMeter struct{ running, peak atomic.Int64 }

func (m *peakMeter) enter() {
	n := m.running.Add(1)
	for p := m.peak.Load(); n > p && !m.peak.CompareAndSwap(p, n); p = m.peak.Load() {
	}
}

func (m *peakMeter) leave() { m.running.Add(-1) }

// holder returns a func that holds a slot of b briefly (others get to run)
// and releases it, counting it in m while held.
func holder(b *bulkhead.Bulkhead, m *peakMeter) func() {
	return func() {
		m.enter()
		runtime.Gosched()
		m.leave()
		b.Release()
	}
}

// spin calls f(0), f(1), ... on a goroutine of g until stop is closed.
func spin(g *sync.WaitGroup, stop <-chan struct{}, f func(i int)) {
	g.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			f(i)
		}
	})
}

// queueWorkers starts workers goroutines in wg that each Acquire a slot of
// b (no deadline: they queue) and hold it, rounds times; a refusal fails
// the test.
func queueWorkers(t *testing.T, wg *sync.WaitGroup, b *bulkhead.Bulkhead, workers, rounds int, hold func()) {
	for range workers {
		wg.Go(func() {
			for range rounds {
				if err := b.Acquire(context.Background()); err != nil {
					t.Errorf("Acquire = %v, want a slot (the queue holds every worker)", err)
					return
				}
				hold()
			}
		})
	}
}

// TestStress runs many goroutines through one bulkhead with random
// cancellations, under -race, and checks that no more than max calls ever
// run at once and that every slot comes back.
func TestStress(t *testing.T) {
	const max, queue, workers, rounds = 3, 8, 16, 300
	b := bulkhead.New(max, bulkhead.WithMaxQueue(queue))
	var m peakMeter
	var admitted, refused, cancelled atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				ctx, cancel := context.WithCancel(context.Background())
				if (w+i)%3 == 0 {
					go func() { // races with the Acquire below
						runtime.Gosched()
						cancel()
					}()
				}
				var err error
				if (w+i)%7 == 0 {
					if !b.TryAcquire() {
						err = bulkhead.ErrFull
					}
				} else {
					err = b.Acquire(ctx)
				}
				switch {
				case err == nil:
					admitted.Add(1)
					m.enter()
					if q := b.Queued(); q > queue {
						t.Errorf("Queued() = %d > %d", q, queue)
					}
					runtime.Gosched() // hold the slot a while: others queue
					m.leave()
					b.Release()
				case errors.Is(err, bulkhead.ErrFull):
					refused.Add(1)
				case errors.Is(err, context.Canceled):
					cancelled.Add(1)
				default:
					t.Errorf("Acquire = %v", err)
				}
				cancel()
			}
		})
	}
	waitAll(t, &wg, "the stress workers")
	if p := m.peak.Load(); p > max {
		t.Fatalf("peak concurrency %d > %d", p, max)
	}
	checkCounts(t, b, counts{0, 0})
	if total := admitted.Load() + refused.Load() + cancelled.Load(); total != workers*rounds {
		t.Fatalf("%d outcomes for %d calls", total, workers*rounds)
	}
	t.Logf("admitted %d, refused %d, cancelled %d, peak %d",
		admitted.Load(), refused.Load(), cancelled.Load(), m.peak.Load())
}

// TestStressOvershoot aims at the fast path's one race: a caller that finds
// every slot taken adds its unit and gives it back, and between the two a
// release, a caller joining the queue and other refused callers act. Two
// goroutines spin on TryAcquire (each refusal is such an overshoot) while
// workers queue for the slots with no deadline and hold them briefly. If a
// unit given back ever left a slot free while callers waited, a worker
// would wait for ever (bounded here by waitAll); the peak must stay within
// max and every slot must come back. (The schedules that race are left to
// chance here; overshoot_test.go plays each of them step by step.)
func TestStressOvershoot(t *testing.T) {
	const max, workers, rounds = 2, 8, 1000
	b := bulkhead.New(max, bulkhead.WithMaxQueue(workers))
	var m peakMeter
	var tried, refusedTries atomic.Int64
	hold := holder(b, &m)
	stop := make(chan struct{})
	var spinners, wg sync.WaitGroup
	for range 2 {
		spin(&spinners, stop, func(i int) {
			tried.Add(1)
			if b.TryAcquire() {
				hold()
			} else {
				refusedTries.Add(1)
			}
			if i%16 == 0 {
				runtime.Gosched() // let the workers run: spinning alone, the test takes seconds
			}
		})
	}
	queueWorkers(t, &wg, b, workers, rounds, hold)
	waitAll(t, &wg, "the workers (a slot given back while they waited reached none of them)")
	close(stop)
	waitAll(t, &spinners, "the TryAcquire spinners")
	if p := m.peak.Load(); p > max {
		t.Fatalf("peak concurrency %d > %d", p, max)
	}
	checkCounts(t, b, counts{0, 0})
	t.Logf("%d TryAcquire calls, %d refused; peak %d", tried.Load(), refusedTries.Load(), m.peak.Load())
}

// TestStressSetLimit changes the limit while workers queue, TryAcquire
// spinners overshoot and slots come back: at every instant the calls
// running are at most the largest limit set, every worker gets its slots
// (a raised limit hands slots to the queue; a lowered one loses none), and
// once the limit settles and everyone is done, every slot has come back.
func TestStressSetLimit(t *testing.T) {
	const workers, rounds = 8, 300
	limits := []int{1, 3, 2, 4, 1}
	b := bulkhead.New(2, bulkhead.WithMaxQueue(workers))
	var m peakMeter
	hold := holder(b, &m)
	stop := make(chan struct{})
	var others, wg sync.WaitGroup
	spin(&others, stop, func(i int) {
		b.SetLimit(limits[i%len(limits)])
		runtime.Gosched()
	})
	spin(&others, stop, func(int) {
		if b.TryAcquire() {
			hold()
		}
	})
	queueWorkers(t, &wg, b, workers, rounds, hold)
	waitAll(t, &wg, "the workers (a slot was lost across SetLimit)")
	close(stop)
	waitAll(t, &others, "the SetLimit and TryAcquire goroutines")
	if p := m.peak.Load(); p > 4 {
		t.Fatalf("peak concurrency %d > 4, the largest limit set", p)
	}
	checkCounts(t, b, counts{0, 0})
	b.SetLimit(1)
	if !b.TryAcquire() || b.TryAcquire() {
		t.Fatal("after SetLimit(1) on an idle bulkhead: want exactly one slot")
	}
	b.Release()
}

// Raising the limit hands the new slots at once to queued callers, first in
// line first; later callers still queue behind the rest.
func TestSetLimitRaisedAdmitsQueuedInOrder(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(1, bulkhead.WithMaxQueue(4))
		_ = b.TryAcquire()
		var waiters []<-chan error
		for range 4 {
			waiters = append(waiters, acquire(t.Context(), b))
		}
		checkCounts(t, b, counts{1, 4})
		b.SetLimit(3)
		synctest.Wait()
		var got []string
		for _, w := range waiters {
			got = append(got, result(w))
		}
		if diff := cmp.Diff([]string{"acquired", "acquired", "waiting", "waiting"}, got); diff != "" {
			t.Fatalf("after SetLimit(3): mismatch (-want +got):\n%s", diff)
		}
		checkCounts(t, b, counts{3, 2})
		if b.Limit() != 3 {
			t.Fatalf("Limit() = %d, want 3", b.Limit())
		}
		if b.TryAcquire() {
			t.Fatal("TryAcquire passed the queued callers")
		}
		b.SetLimit(10) // both remaining waiters at once
		synctest.Wait()
		if diff := cmp.Diff([]string{"acquired", "acquired"}, []string{result(waiters[2]), result(waiters[3])}); diff != "" {
			t.Fatalf("after SetLimit(10): mismatch (-want +got):\n%s", diff)
		}
		checkCounts(t, b, counts{5, 0})
		for range 5 {
			b.Release()
		}
		checkCounts(t, b, counts{0, 0})
	})
}

// Lowering the limit revokes nothing: the calls running keep their slots;
// slots given back go to nobody until fewer than the new limit are held,
// then queued callers are admitted in order, one per slot that frees.
func TestSetLimitLoweredRevokesNothing(t *testing.T) {
	bubble(t, func(t *testing.T) {
		b := bulkhead.New(4, bulkhead.WithMaxQueue(2))
		for range 4 {
			_ = b.TryAcquire()
		}
		first := acquire(t.Context(), b)
		second := acquire(t.Context(), b)
		b.SetLimit(2)
		checkCounts(t, b, counts{4, 2})
		if b.TryAcquire() {
			t.Fatal("TryAcquire admitted above the lowered limit")
		}
		state := func() []string { return []string{result(first), result(second)} }
		b.Release() // 3 held, limit 2: nobody gets it
		b.Release() // 2 held: still nobody
		synctest.Wait()
		if diff := cmp.Diff([]string{"waiting", "waiting"}, state()); diff != "" {
			t.Fatalf("with 2 held under limit 2: mismatch (-want +got):\n%s", diff)
		}
		checkCounts(t, b, counts{2, 2})
		b.Release() // 1 held: the first in line gets the slot
		synctest.Wait()
		if diff := cmp.Diff([]string{"acquired", "waiting"}, state()); diff != "" {
			t.Fatalf("with 1 held under limit 2: mismatch (-want +got):\n%s", diff)
		}
		checkCounts(t, b, counts{2, 1})
		b.Release()
		synctest.Wait()
		if got := result(second); got != "acquired" {
			t.Fatalf("second caller: %s", got)
		}
		checkCounts(t, b, counts{2, 0})
		b.Release()
		b.Release()
		checkCounts(t, b, counts{0, 0})
	})
}

// Lowered with nobody queued, the bulkhead refuses until the calls running
// fall below the new limit.
func TestSetLimitLoweredWithoutQueue(t *testing.T) {
	b := bulkhead.New(3)
	for range 3 {
		_ = b.TryAcquire()
	}
	b.SetLimit(1)
	if err := b.Acquire(t.Context()); !errors.Is(err, bulkhead.ErrFull) {
		t.Fatalf("Acquire with 3 held under limit 1 = %v, want ErrFull", err)
	}
	b.Release()
	b.Release()
	if b.TryAcquire() {
		t.Fatal("admitted with 1 held under limit 1")
	}
	b.Release()
	if !b.TryAcquire() {
		t.Fatal("refused with none held under limit 1")
	}
	b.Release()
	checkCounts(t, b, counts{0, 0})
}

func TestSetLimitInvalidPanics(t *testing.T) {
	b := bulkhead.New(2)
	for _, n := range []int{0, -1, 1 << 31} {
		func() {
			defer func() {
				want := fmt.Sprintf("bulkhead: SetLimit n must be between 1 and 2147483647, got %d", n)
				if r := recover(); r != want {
					t.Errorf("SetLimit(%d): panic %v, want %q", n, r, want)
				}
			}()
			b.SetLimit(n)
		}()
	}
	if b.Limit() != 2 {
		t.Fatalf("Limit() = %d after invalid SetLimits, want 2", b.Limit())
	}
	// The bounds themselves are valid.
	for _, n := range []int{1<<31 - 1, 1} {
		b.SetLimit(n)
		if b.Limit() != n {
			t.Errorf("Limit() = %d after SetLimit(%d)", b.Limit(), n)
		}
	}
}
