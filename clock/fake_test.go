package clock_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/f0b5b96b/resilience/clock"
)

var epoch = time.Date(2000, time.January, 1, 0, 0, 0, 0, time.UTC)

// received reports the value pending on c, if any, without blocking.
func received(c <-chan time.Time) (time.Time, bool) {
	select {
	case v := <-c:
		return v, true
	default:
		return time.Time{}, false
	}
}

func TestNewFakeStartsAtEpoch(t *testing.T) {
	f := clock.NewFake()
	if got := f.Now(); !got.Equal(epoch) || got.Location() != time.UTC {
		t.Fatalf("NewFake().Now() = %v, want %v", got, epoch)
	}
	if got := f.Waiters(); got != 0 {
		t.Fatalf("Waiters() = %d, want 0", got)
	}
}

func TestZeroFakeUsableAtEpoch(t *testing.T) {
	var f clock.Fake
	if got := f.Now(); !got.Equal(epoch) {
		t.Fatalf("zero Fake Now() = %v, want %v", got, epoch)
	}
	tm := f.NewTimer(time.Second)
	f.Advance(time.Second)
	if v, ok := received(tm.C()); !ok || !v.Equal(epoch.Add(time.Second)) {
		t.Fatalf("timer value = %v, %v; want %v, true", v, ok, epoch.Add(time.Second))
	}
}

func TestFakeFiresInDeadlineThenArmingOrder(t *testing.T) {
	f := clock.NewFake()
	var got []string
	add := func(name string, d time.Duration) clock.Timer {
		return f.AfterFunc(d, func() { got = append(got, fmt.Sprintf("%s@%v", name, f.Now().Sub(epoch))) })
	}
	add("a", 3*time.Second)
	add("b", time.Second)
	c := add("c", 2*time.Second)
	add("d", time.Second)
	add("e", 2*time.Second)
	// Re-arming c puts it after e among the 2s deadlines.
	c.Reset(2 * time.Second)
	f.Advance(5 * time.Second)
	want := []string{"b@1s", "d@1s", "e@2s", "c@2s", "a@3s"}
	if !slices.Equal(got, want) {
		t.Fatalf("firing order = %v, want %v", got, want)
	}
	if got := f.Now(); !got.Equal(epoch.Add(5 * time.Second)) {
		t.Fatalf("Now() after Advance = %v, want epoch+5s", got)
	}
}

// AdvanceNext fires one timer per call, in the order Advance would, moving
// the time to each deadline, and reports false once none is armed.
func TestFakeAdvanceNextFiresOneTimerAtATime(t *testing.T) {
	f := clock.NewFake()
	var got []string
	add := func(name string, d time.Duration) clock.Timer {
		return f.AfterFunc(d, func() { got = append(got, fmt.Sprintf("%s@%v", name, f.Now().Sub(epoch))) })
	}
	add("a", 3*time.Second)
	add("b", time.Second)
	c := add("c", 2*time.Second)
	ch := f.NewTimer(time.Second)
	add("e", 2*time.Second)
	c.Reset(2 * time.Second)
	want := []string{"b@1s", "ch@1s", "e@2s", "c@2s", "a@3s"}
	for i, w := range want {
		if !f.AdvanceNext() {
			t.Fatalf("AdvanceNext #%d = false, want true", i+1)
		}
		if v, ok := received(ch.C()); ok {
			got = append(got, fmt.Sprintf("ch@%v", v.Sub(epoch)))
		}
		if diff := cmp.Diff(want[:i+1], got); diff != "" {
			t.Fatalf("after AdvanceNext #%d (%s): firings mismatch (-want +got):\n%s", i+1, w, diff)
		}
	}
	if f.AdvanceNext() {
		t.Fatal("AdvanceNext with no timer armed = true, want false")
	}
	if got, want := f.Now(), epoch.Add(3*time.Second); !got.Equal(want) {
		t.Fatalf("Now() = %v, want %v (the last deadline: AdvanceNext moves no further)", got, want)
	}
	// A timer due now fires without moving the time.
	f.AfterFunc(0, func() {})
	if !f.AdvanceNext() || !f.Now().Equal(epoch.Add(3*time.Second)) {
		t.Fatalf("AdvanceNext of a timer due now: Now() = %v, want epoch+3s", f.Now())
	}
}

func TestFakeChannelTimersFireInOrderWithDeadlineValues(t *testing.T) {
	f := clock.NewFake()
	t1 := f.NewTimer(2 * time.Second)
	t2 := f.NewTimer(time.Second)
	f.Advance(time.Second)
	if _, ok := received(t1.C()); ok {
		t.Fatal("2s timer fired after 1s")
	}
	if v, ok := received(t2.C()); !ok || !v.Equal(epoch.Add(time.Second)) {
		t.Fatalf("1s timer: %v, %v", v, ok)
	}
	f.Advance(10 * time.Second)
	// The value is the deadline, not the Advance target.
	if v, ok := received(t1.C()); !ok || !v.Equal(epoch.Add(2*time.Second)) {
		t.Fatalf("2s timer: %v, %v; want epoch+2s", v, ok)
	}
}

func TestFakeAdvanceBelowDeadlineFiresNothing(t *testing.T) {
	f := clock.NewFake()
	tm := f.NewTimer(time.Second)
	f.Advance(time.Second - 1)
	if _, ok := received(tm.C()); ok {
		t.Fatal("timer fired early")
	}
	if f.Waiters() != 1 {
		t.Fatalf("Waiters() = %d, want 1", f.Waiters())
	}
	f.Advance(1)
	if _, ok := received(tm.C()); !ok {
		t.Fatal("timer did not fire at its deadline")
	}
}

func TestFakeCallbacksArmTimersWithinSameAdvance(t *testing.T) {
	f := clock.NewFake()
	var events []string
	var late, reset clock.Timer
	var ch clock.Timer
	f.AfterFunc(time.Second, func() {
		// A callback may use the Fake: none of these may deadlock.
		events = append(events, "first@"+f.Now().Sub(epoch).String())
		f.AfterFunc(time.Second, func() { events = append(events, "chained@"+f.Now().Sub(epoch).String()) })
		late = f.AfterFunc(time.Hour, func() { events = append(events, "late") })
		ch = f.NewTimer(500 * time.Millisecond)
		reset.Reset(2 * time.Second) // moves reset from 10s to 3s
		_ = f.Waiters()
	})
	reset = f.AfterFunc(10*time.Second, func() { events = append(events, "reset@"+f.Now().Sub(epoch).String()) })
	f.Advance(5 * time.Second)
	want := []string{"first@1s", "chained@2s", "reset@3s"}
	if !slices.Equal(events, want) {
		t.Fatalf("events = %v, want %v", events, want)
	}
	if v, ok := received(ch.C()); !ok || !v.Equal(epoch.Add(1500*time.Millisecond)) {
		t.Fatalf("timer armed by callback: %v, %v; want epoch+1.5s", v, ok)
	}
	if f.Waiters() != 1 || !late.Stop() {
		t.Fatalf("timer due after the target should stay armed; Waiters() = %d", f.Waiters())
	}
}

func TestFakeCallbackCanStopOtherTimers(t *testing.T) {
	f := clock.NewFake()
	fired := false
	var victim clock.Timer
	f.AfterFunc(time.Second, func() {
		if !victim.Stop() {
			t.Error("Stop of armed timer from callback = false")
		}
	})
	victim = f.AfterFunc(time.Second, func() { fired = true })
	f.Advance(time.Second)
	if fired {
		t.Fatal("timer stopped by an earlier callback still fired")
	}
}

func TestFakeAfterFuncRunsSynchronouslyInAdvance(t *testing.T) {
	f := clock.NewFake()
	ran := false // no synchronisation: the race detector flags another goroutine
	tm := f.AfterFunc(time.Second, func() { ran = true })
	if tm.C() != nil {
		t.Fatal("AfterFunc timer C() != nil")
	}
	f.Advance(time.Second)
	if !ran {
		t.Fatal("callback had not run when Advance returned")
	}
}

func TestFakeAfterFuncZeroDurationFiresOnNextAdvance(t *testing.T) {
	f := clock.NewFake()
	ran := false
	f.AfterFunc(0, func() { ran = true })
	if ran || f.Waiters() != 1 {
		t.Fatalf("AfterFunc(0) ran=%v Waiters=%d before Advance; want false, 1", ran, f.Waiters())
	}
	f.Advance(0)
	if !ran {
		t.Fatal("AfterFunc(0) did not run on Advance(0)")
	}
}

func TestFakeNewTimerNonPositiveFiresAtOnce(t *testing.T) {
	f := clock.NewFake()
	for _, d := range []time.Duration{0, -time.Second} {
		tm := f.NewTimer(d)
		if v, ok := received(tm.C()); !ok || !v.Equal(epoch) {
			t.Fatalf("NewTimer(%v): %v, %v; want epoch, true", d, v, ok)
		}
	}
	if f.Waiters() != 0 {
		t.Fatalf("Waiters() = %d, want 0", f.Waiters())
	}
}

func TestFakeChannelSendDoesNotBlock(t *testing.T) {
	f := clock.NewFake()
	tm := f.NewTimer(time.Second)
	f.AfterFunc(2*time.Second, func() { tm.Reset(time.Second) }) // drains, re-arms for 3s
	f.Advance(time.Second)
	// Fire again while the first value is still unreceived: Advance must not block.
	f.AfterFunc(0, func() {})
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Advance(5 * time.Second)
	}()
	recvWithin(t, done, "Advance to return while a fired timer's value is still unreceived")
	v, ok := received(tm.C())
	if !ok || !v.Equal(epoch.Add(3*time.Second)) {
		t.Fatalf("got %v, %v; want epoch+3s", v, ok)
	}
	if _, ok := received(tm.C()); ok {
		t.Fatal("more than one value buffered")
	}
}

func TestFakeStopDrainsPendingValue(t *testing.T) {
	f := clock.NewFake()
	tm := f.NewTimer(time.Second)
	f.Advance(time.Second)
	// Go 1.23+ semantics: an unreceived value counts as not fired.
	if !tm.Stop() {
		t.Fatal("Stop with an unreceived value = false, want true")
	}
	if _, ok := received(tm.C()); ok {
		t.Fatal("stale value received after Stop")
	}
	if tm.Stop() {
		t.Fatal("second Stop = true")
	}
}

func TestFakeResetDrainsPendingValue(t *testing.T) {
	f := clock.NewFake()
	tm := f.NewTimer(time.Second)
	f.Advance(time.Second)
	if !tm.Reset(time.Second) {
		t.Fatal("Reset with an unreceived value = false, want true")
	}
	if _, ok := received(tm.C()); ok {
		t.Fatal("stale value received after Reset")
	}
	f.Advance(time.Second)
	if v, ok := received(tm.C()); !ok || !v.Equal(epoch.Add(2*time.Second)) {
		t.Fatalf("after Reset: %v, %v; want epoch+2s", v, ok)
	}
}

func TestFakeStopAndResetResults(t *testing.T) {
	f := clock.NewFake()
	tm := f.NewTimer(time.Second)
	if !tm.Stop() {
		t.Fatal("Stop of armed timer = false")
	}
	if f.Waiters() != 0 {
		t.Fatalf("Waiters() after Stop = %d", f.Waiters())
	}
	if tm.Stop() {
		t.Fatal("Stop of stopped timer = true")
	}
	f.Advance(time.Hour)
	if _, ok := received(tm.C()); ok {
		t.Fatal("stopped timer fired")
	}
	if tm.Reset(time.Second) {
		t.Fatal("Reset of stopped timer = true")
	}
	if !tm.Reset(2 * time.Second) {
		t.Fatal("Reset of armed timer = false")
	}
	f.Advance(time.Second)
	if _, ok := received(tm.C()); ok {
		t.Fatal("timer fired at its old deadline after Reset")
	}
	f.Advance(time.Second)
	if _, ok := received(tm.C()); !ok {
		t.Fatal("timer did not fire at its Reset deadline")
	}
	// Fired and received: Stop and Reset report inactive.
	if tm.Stop() {
		t.Fatal("Stop of fired timer = true")
	}
	if tm.Reset(time.Second) {
		t.Fatal("Reset of fired timer = true")
	}

	n := 0
	af := f.AfterFunc(time.Second, func() { n++ })
	f.Advance(time.Second)
	if af.Stop() {
		t.Fatal("Stop of fired AfterFunc = true")
	}
	if af.Reset(time.Second) {
		t.Fatal("Reset of fired AfterFunc = true")
	}
	f.Advance(time.Second)
	if n != 2 {
		t.Fatalf("AfterFunc ran %d times after Reset, want 2", n)
	}
}

func TestFakeAdvanceNegativePanics(t *testing.T) {
	f := clock.NewFake()
	defer func() {
		const want = "clock: Advance with negative duration -1s"
		if r := recover(); r != want {
			t.Fatalf("panic = %v, want %q", r, want)
		}
	}()
	f.Advance(-time.Second)
}

func TestFakeAfterFuncNilPanics(t *testing.T) {
	defer func() {
		if r, _ := recover().(string); r != "clock: AfterFunc with nil func" {
			t.Fatalf("panic = %q", r)
		}
	}()
	clock.NewFake().AfterFunc(time.Second, nil)
}

func TestFakeSetForwardFiresBackwardDoesNot(t *testing.T) {
	f := clock.NewFake()
	n := 0
	f.AfterFunc(time.Hour, func() { n++ })
	f.Set(epoch.Add(-time.Hour))
	if !f.Now().Equal(epoch.Add(-time.Hour)) || n != 0 {
		t.Fatalf("Set back: Now=%v n=%d", f.Now(), n)
	}
	f.Set(epoch.Add(30 * time.Minute)) // before the timer's absolute deadline
	if n != 0 {
		t.Fatal("timer fired before its absolute deadline")
	}
	f.Set(epoch.Add(2 * time.Hour))
	if n != 1 || !f.Now().Equal(epoch.Add(2*time.Hour)) {
		t.Fatalf("Set forward: Now=%v n=%d", f.Now(), n)
	}
	f.AfterFunc(0, func() { n++ })
	f.Set(f.Now()) // not before now: same as Advance(0)
	if n != 2 {
		t.Fatal("Set(Now()) did not fire a due timer")
	}
}

func TestFakeSleepReturnsOnAdvance(t *testing.T) {
	f := clock.NewFake()
	done := make(chan error, 1)
	go func() { done <- f.Sleep(context.Background(), time.Second) }()
	blockUntilWithin(t, f, 1)
	f.Advance(time.Second - 1)
	select {
	case err := <-done:
		t.Fatalf("Sleep returned %v before its deadline", err)
	default:
	}
	f.Advance(1)
	if err := recvWithin(t, done, "Sleep to return after Advance reached its deadline"); err != nil {
		t.Fatalf("Sleep = %v, want nil", err)
	}
	if f.Waiters() != 0 {
		t.Fatalf("Waiters() = %d, want 0", f.Waiters())
	}
}

func TestFakeSleepContextCancelRemovesTimer(t *testing.T) {
	f := clock.NewFake()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Sleep(ctx, time.Hour) }()
	blockUntilWithin(t, f, 1)
	cancel()
	if err := recvWithin(t, done, "Sleep to return after its ctx was cancelled"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep = %v, want context.Canceled", err)
	}
	if f.Waiters() != 0 {
		t.Fatalf("Waiters() after cancelled Sleep = %d, want 0", f.Waiters())
	}
}

func TestFakeSleepImmediateCases(t *testing.T) {
	f := clock.NewFake()
	live := context.Background()
	dead, cancel := context.WithCancel(context.Background())
	cancel()
	cases := []struct {
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{live, 0, nil},
		{live, -time.Second, nil},
		{dead, 0, context.Canceled},
		{dead, time.Hour, context.Canceled},
	}
	for _, c := range cases {
		if err := f.Sleep(c.ctx, c.d); err != c.want {
			t.Errorf("Sleep(d=%v) = %v, want %v", c.d, err, c.want)
		}
	}
	if f.Waiters() != 0 {
		t.Fatalf("Waiters() = %d, want 0", f.Waiters())
	}
}

func TestFakeWaitersCountsAllArmedTimers(t *testing.T) {
	f := clock.NewFake()
	a := f.NewTimer(time.Second)
	f.AfterFunc(2*time.Second, func() {})
	f.NewTimer(0) // fires at once: not armed
	if got := f.Waiters(); got != 2 {
		t.Fatalf("Waiters() = %d, want 2", got)
	}
	a.Stop()
	if got := f.Waiters(); got != 1 {
		t.Fatalf("Waiters() after Stop = %d, want 1", got)
	}
	f.Advance(2 * time.Second)
	if got := f.Waiters(); got != 0 {
		t.Fatalf("Waiters() after firing = %d, want 0", got)
	}
}

func TestFakeBlockUntilReleasesAllSleepers(t *testing.T) {
	const n = 10
	f := clock.NewFake()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() { errs <- f.Sleep(context.Background(), time.Duration(i+1)*time.Second) })
	}
	blockUntilWithin(t, f, n)
	if got := f.Waiters(); got != n {
		t.Fatalf("Waiters() = %d, want %d", got, n)
	}
	f.Advance(n * time.Second)
	waitWithin(t, &wg, "every Sleep to return after Advance passed its deadline")
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Sleep = %v", err)
		}
	}
}

func TestFakeBlockUntilContextEnds(t *testing.T) {
	f := clock.NewFake()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.BlockUntil(ctx, 2) }()
	f.NewTimer(time.Second).Stop() // wakes it without satisfying it
	cancel()
	if err := recvWithin(t, done, "BlockUntil to return after its ctx was cancelled"); !errors.Is(err, context.Canceled) {
		t.Fatalf("BlockUntil = %v, want context.Canceled", err)
	}
	// Satisfied at once, even with n <= 0 or a dead ctx.
	if err := f.BlockUntil(ctx, 0); err != nil {
		t.Fatalf("BlockUntil(dead, 0) = %v, want nil", err)
	}
}

func TestFakeBlockUntilWakesOnArm(t *testing.T) {
	f := clock.NewFake()
	done := make(chan error, 1)
	go func() { done <- f.BlockUntil(context.Background(), 2) }()
	f.NewTimer(time.Second)
	f.AfterFunc(time.Second, func() {})
	if err := recvWithin(t, done, "BlockUntil(2) to return once two timers were armed"); err != nil {
		t.Fatal(err)
	}
}

// A BlockUntil already waiting when the timers are armed is woken by each
// arming (the test above may arm them before it waits). In a synctest
// bubble a waiter that no arming wakes is a deadlock, reported at once.
func TestFakeBlockUntilWaitingIsWokenByArming(t *testing.T) {
	arms := map[string]func(*clock.Fake){
		"NewTimer":  func(f *clock.Fake) { f.NewTimer(time.Second) },
		"AfterFunc": func(f *clock.Fake) { f.AfterFunc(time.Second, func() {}) },
		"Reset":     func(f *clock.Fake) { f.NewTimer(0).Reset(time.Second) },
		"Sleep": func(f *clock.Fake) {
			go func() { _ = f.Sleep(context.Background(), time.Second) }()
		},
	}
	for name, arm := range arms {
		t.Run(name, func(t *testing.T) {
			bubble(t, func(t *testing.T) {
				f := clock.NewFake()
				done := make(chan error, 1)
				go func() { done <- f.BlockUntil(context.Background(), 1) }()
				synctest.Wait() // BlockUntil waits
				arm(f)
				if err := <-done; err != nil {
					t.Fatalf("BlockUntil = %v, want nil", err)
				}
				f.Advance(time.Second) // the Sleep, if any, returns
			})
		})
	}
}

// TestFakeConcurrent runs goroutines that sleep, arm channel timers and
// AfterFunc timers, stop and reset them, while the test goroutine advances.
// Run with -race.
func TestFakeConcurrent(t *testing.T) {
	const (
		workers = 8
		rounds  = 50
	)
	// The whole run takes milliseconds: its bound is a few times patience,
	// still far below a mutation run's timeout.
	const runPatience = 5 * patience
	f := clock.NewFake()
	// Every wait of the workers and of the loop below ends by this ctx.
	ctx, stop := context.WithTimeout(t.Context(), runPatience)
	defer stop()
	var wg sync.WaitGroup
	var mu sync.Mutex
	fired := 0
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				d := time.Duration(1+(w+r)%5) * time.Millisecond
				// Arm-and-stop noise that leaves Waiters unchanged.
				extra := f.NewTimer(time.Hour)
				extra.Reset(d)
				extra.Stop()
				_ = f.Now()
				switch (w + r) % 3 {
				case 0:
					if err := f.Sleep(ctx, d); err != nil {
						t.Error(err)
						return
					}
				case 1:
					tm := f.NewTimer(d)
					select {
					case <-tm.C():
					case <-ctx.Done():
						t.Errorf("worker %d round %d: timer of %v not fired within %v", w, r, d, runPatience)
						return
					}
				case 2:
					done := make(chan struct{})
					f.AfterFunc(d, func() {
						mu.Lock()
						fired++
						mu.Unlock()
						close(done)
					})
					select {
					case <-done:
					case <-ctx.Done():
						t.Errorf("worker %d round %d: AfterFunc of %v not run within %v", w, r, d, runPatience)
						return
					}
				}
			}
		})
	}
	// Every timer armed below is due within 5ms, so each Advance releases
	// all armed timers; keep advancing until every worker is done.
	allDone, cancel := context.WithCancel(ctx)
	go func() { wg.Wait(); cancel() }()
	prev := f.Now()
	for f.BlockUntil(allDone, 1) == nil {
		f.Advance(5 * time.Millisecond)
		if now := f.Now(); now.Sub(prev) != 5*time.Millisecond {
			t.Fatalf("Advance(5ms) moved time by %v", now.Sub(prev))
		}
		prev = f.Now()
	}
	waitWithin(t, &wg, "every worker to finish its rounds")
	if ctx.Err() != nil {
		t.Fatalf("workers not done within %v", runPatience)
	}
	if f.Waiters() != 0 {
		t.Fatalf("Waiters() = %d, want 0", f.Waiters())
	}
	mu.Lock()
	defer mu.Unlock()
	if fired == 0 {
		t.Fatal("no AfterFunc callback ran")
	}
}

// TestFakeConcurrentAdvance checks that concurrent Advance calls are
// serialised: time never goes backwards and every timer fires once.
func TestFakeConcurrentAdvance(t *testing.T) {
	f := clock.NewFake()
	var mu sync.Mutex
	var seen []time.Time
	for i := range 100 {
		f.AfterFunc(time.Duration(i)*time.Millisecond, func() {
			mu.Lock()
			seen = append(seen, f.Now())
			mu.Unlock()
		})
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() { f.Advance(10 * time.Millisecond) })
	}
	waitWithin(t, &wg, "10 concurrent Advance calls to return")
	if len(seen) != 100 {
		t.Fatalf("%d callbacks ran, want 100", len(seen))
	}
	if !slices.IsSortedFunc(seen, time.Time.Compare) {
		t.Fatal("callbacks saw time go backwards")
	}
	if want := epoch.Add(100 * time.Millisecond); !f.Now().Equal(want) {
		t.Fatalf("Now() = %v, want %v", f.Now(), want)
	}
}

// A BlockUntil that gives up inside a synctest bubble must leave nothing
// behind: a later timer change outside the bubble would otherwise close a
// channel that belongs to the bubble, a fatal error.
func TestBlockUntilInsideBubbleLeavesNothingBehind(t *testing.T) {
	f := clock.NewFake()
	bubble(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := f.BlockUntil(ctx, 1); err != context.DeadlineExceeded {
			t.Fatalf("BlockUntil = %v, want %v", err, context.DeadlineExceeded)
		}
	})
	f.NewTimer(time.Second) // a timer change outside the bubble
	if n := f.Waiters(); n != 1 {
		t.Fatalf("Waiters = %d, want 1", n)
	}
}

// maxFiringsPerInstant is the bound documented at Fake.Advance.
const maxFiringsPerInstant = 1 << 20

// A callback that re-arms its own timer for the current instant would fire
// forever within one Advance: past maxFiringsPerInstant firings at
// one instant, Advance panics with a message that says what happened, and
// the Fake stays usable. The callback stops re-arming once past the bound,
// so that a Fake without it returns (and fails the test) instead of
// looping for ever.
func TestFakeSelfRearmingTimerPanicsPastBound(t *testing.T) {
	moves := map[string]func(*clock.Fake){
		"Advance": func(f *clock.Fake) { f.Advance(2 * time.Second) },
		"Set":     func(f *clock.Fake) { f.Set(epoch.Add(2 * time.Second)) },
	}
	for name, move := range moves {
		t.Run(name, func(t *testing.T) {
			f := clock.NewFake()
			n := 0
			var tm clock.Timer
			tm = f.AfterFunc(time.Second, func() {
				n++
				if n > maxFiringsPerInstant {
					return // past the bound: Advance should have panicked
				}
				tm.Reset(0)
			})
			done := make(chan any, 1)
			go func() {
				defer func() { done <- recover() }()
				move(f)
			}()
			// A million firings take about 2 s under -race on a small machine.
			r := recvWithinFor(t, done, time.Minute, name+" with a timer that re-arms itself with Reset(0) to return or panic")
			msg, _ := r.(string)
			const want = "clock: more than 1048576 timer firings at 2000-01-01 00:00:01 +0000 UTC within one Advance or Set: " +
				"a timer callback re-arms a timer for the current instant (Reset(0) or AfterFunc(0)) without end"
			if msg != want {
				t.Fatalf("panic = %#v\nwant     %q", r, want)
			}
			if n != maxFiringsPerInstant {
				t.Fatalf("callback ran %d times before the panic, want %d", n, maxFiringsPerInstant)
			}
			// The Fake is still usable: time stopped where the loop was, the
			// timer is armed, and a later Advance works.
			if got, want := f.Now(), epoch.Add(time.Second); !got.Equal(want) {
				t.Fatalf("Now() after the panic = %v, want %v", got, want)
			}
			if f.Waiters() != 1 || !tm.Stop() {
				t.Fatalf("re-armed timer not armed after the panic; Waiters() = %d", f.Waiters())
			}
			f.Advance(time.Second)
			if got, want := f.Now(), epoch.Add(2*time.Second); !got.Equal(want) {
				t.Fatalf("Now() after a later Advance = %v, want %v", got, want)
			}
		})
	}
}

// Legitimate bursts at one instant stay well below the bound, and the bound
// counts per instant: many timers due at the same instant, or a chain of
// zero-delay callbacks of bounded length, each firing at a new instant,
// all fire within one Advance without a panic.
func TestFakeManyFiringsAtDistinctInstantsDoNotPanic(t *testing.T) {
	f := clock.NewFake()
	const sameInstant = 10_000
	n := 0
	for range sameInstant {
		f.AfterFunc(time.Second, func() { n++ })
	}
	// A callback chain that re-arms with Reset(0) a bounded number of
	// times at each of many instants: more firings in all than the bound,
	// fewer than the bound at any one instant.
	instants := 0
	perInstant := 0
	const chain = 1000
	var tm clock.Timer
	tm = f.AfterFunc(time.Second, func() {
		perInstant++
		if perInstant < chain {
			tm.Reset(0)
			return
		}
		perInstant = 0
		instants++
		tm.Reset(time.Nanosecond)
	})
	total := maxFiringsPerInstant/chain + 2
	f.Advance(time.Second + time.Duration(total)*time.Nanosecond)
	if n != sameInstant {
		t.Fatalf("%d of %d timers due at one instant fired", n, sameInstant)
	}
	if instants*chain <= maxFiringsPerInstant {
		t.Fatalf("the chain fired %d times in all, want more than the bound %d", instants*chain, maxFiringsPerInstant)
	}
}

// moves are the calls that move a Fake's time, which a callback of the
// same Fake must not make.
var moves = []struct {
	name string
	move func(*clock.Fake)
}{
	{"Advance", func(f *clock.Fake) { f.Advance(time.Second) }},
	{"Set", func(f *clock.Fake) { f.Set(f.Now().Add(time.Second)) }},
	{"AdvanceNext", func(f *clock.Fake) { f.AdvanceNext() }},
}

// Advance, Set or a Sleep that would block, called from an AfterFunc
// callback of the same Fake, would wait for ever for the Advance or Set
// that runs the callback: each panics instead, with a message that says
// so, and the Fake stays usable.
func TestFakeCallbackMovingItsFakePanics(t *testing.T) {
	inner := append(slices.Clone(moves), struct {
		name string
		move func(*clock.Fake)
	}{"Sleep", func(f *clock.Fake) { _ = f.Sleep(context.Background(), time.Second) }})
	for _, outer := range moves {
		for _, in := range inner {
			t.Run(outer.name+"/"+in.name, func(t *testing.T) {
				f := clock.NewFake()
				f.AfterFunc(time.Second, func() { in.move(f) })
				done := make(chan any, 1)
				go func() {
					defer func() { done <- recover() }()
					outer.move(f)
				}()
				r := recvWithin(t, done, outer.name+" whose callback calls "+in.name+" to panic")
				want := "clock: " + in.name + " called from an AfterFunc callback of the same Fake: " +
					"the callback runs inside Advance or Set, so time cannot move until it returns"
				if msg, _ := r.(string); msg != want {
					t.Fatalf("panic = %#v\nwant     %q", r, want)
				}
				// The Fake is usable: the callback's timer has fired, and
				// another Advance, then a Sleep, work.
				if n := f.Waiters(); n != 0 {
					t.Fatalf("Waiters() after the panic = %d, want 0", n)
				}
				go func() {
					defer func() { done <- recover() }()
					f.Advance(time.Second)
				}()
				if r := recvWithin(t, done, "an Advance after the panic to return"); r != nil {
					t.Fatalf("an Advance after the panic panicked: %v", r)
				}
				if got, want := f.Now(), epoch.Add(2*time.Second); !got.Equal(want) {
					t.Fatalf("Now() = %v, want %v", got, want)
				}
				slept := make(chan error, 1)
				go func() { slept <- f.Sleep(t.Context(), time.Second) }()
				blockUntilWithin(t, f, 1)
				f.Advance(time.Second)
				if err := recvWithin(t, slept, "a Sleep after the panic to return"); err != nil {
					t.Fatalf("Sleep = %v", err)
				}
			})
		}
	}
}

// What a callback may still do: Sleep for 0 or with a done context
// (neither blocks), move another Fake; and other goroutines may Sleep or
// Advance while a callback runs (the Advance waits for it).
func TestFakeCallbackReentryCheckHasNoFalsePositives(t *testing.T) {
	t.Run("Sleep that does not block", func(t *testing.T) {
		f := clock.NewFake()
		done, cancel := context.WithCancel(context.Background())
		cancel()
		var errs []error
		f.AfterFunc(time.Second, func() {
			errs = append(errs, f.Sleep(context.Background(), 0), f.Sleep(done, time.Second))
		})
		f.Advance(time.Second)
		if diff := cmp.Diff([]error{nil, context.Canceled}, errs, cmpopts.EquateErrors()); diff != "" {
			t.Fatalf("Sleep from a callback mismatch (-want +got):\n%s", diff)
		}
	})
	t.Run("another Fake", func(t *testing.T) {
		f, g := clock.NewFake(), clock.NewFake()
		fired := false
		g.AfterFunc(time.Second, func() { fired = true })
		f.AfterFunc(time.Second, func() { g.Advance(time.Second) })
		f.Advance(time.Second)
		if !fired {
			t.Fatal("g.Advance from f's callback did not fire g's timer")
		}
	})
	t.Run("Sleep from another goroutine", func(t *testing.T) {
		f := clock.NewFake()
		slept := make(chan error, 1)
		f.AfterFunc(time.Second, func() {
			go func() { slept <- f.Sleep(t.Context(), time.Second) }()
			ctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			if err := f.BlockUntil(ctx, 1); err != nil {
				t.Errorf("the other goroutine's Sleep did not arm its timer within %v", patience)
			}
		})
		f.Advance(time.Second)
		f.Advance(time.Second)
		if err := recvWithin(t, slept, "the other goroutine's Sleep to return"); err != nil {
			t.Fatalf("Sleep = %v", err)
		}
	})
	t.Run("Advance from another goroutine", func(t *testing.T) {
		// The callback returns only once the other goroutine's Advance
		// waits for it (its stack shows it waiting on a lock in Advance).
		f := clock.NewFake()
		advanced := make(chan any, 1)
		f.AfterFunc(time.Second, func() {
			go func() {
				defer func() { advanced <- recover() }()
				f.Advance(time.Second)
			}()
			waitForStack(t, "clock.(*Fake).Advance", "lockSlow")
		})
		f.Advance(time.Second)
		if r := recvWithin(t, advanced, "the other goroutine's Advance to return"); r != nil {
			t.Fatalf("the other goroutine's Advance panicked: %v", r)
		}
		if got, want := f.Now(), epoch.Add(2*time.Second); !got.Equal(want) {
			t.Fatalf("Now() = %v, want %v", got, want)
		}
	})
}

// waitForStack waits, yielding, until a goroutine's stack holds every one
// of frames; it fails t if none does within patience.
func waitForStack(t *testing.T, frames ...string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); runtime.Gosched() {
		for g := range strings.SplitSeq(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			if !slices.ContainsFunc(frames, func(s string) bool { return !strings.Contains(g, s) }) {
				return
			}
		}
	}
	t.Errorf("no goroutine's stack held %q within %v", frames, patience)
}

// The check that a callback does not move its own Fake costs an Advance
// that fires callbacks no allocation.
func TestFakeAdvanceFiringCallbacksDoesNotAllocate(t *testing.T) {
	f := clock.NewFake()
	n := 0
	tm := f.AfterFunc(time.Second, func() { n++ })
	if allocs := testing.AllocsPerRun(100, func() {
		tm.Reset(time.Second)
		f.Advance(time.Second)
	}); allocs != 0 {
		t.Fatalf("Reset then an Advance that fires the callback: %v allocations, want 0", allocs)
	}
	if n != 101 { // AllocsPerRun runs its function once more to warm up
		t.Fatalf("callback ran %d times, want 101", n)
	}
}

// A timer that fired at once (d <= 0) was never armed: stopping it
// disarms nothing else.
func TestFakeStopTimerThatFiredAtOnceLeavesOthersArmed(t *testing.T) {
	f := clock.NewFake()
	a, b := f.NewTimer(time.Second), f.NewTimer(2*time.Second)
	tm := f.NewTimer(0)
	if _, ok := received(tm.C()); !ok {
		t.Fatal("NewTimer(0) sent nothing")
	}
	if tm.Stop() {
		t.Error("Stop of a fired, received timer = true, want false")
	}
	if got := f.Waiters(); got != 2 {
		t.Fatalf("Waiters() = %d after the Stop, want 2", got)
	}
	f.Advance(2 * time.Second)
	for i, c := range []<-chan time.Time{a.C(), b.C()} {
		if _, ok := received(c); !ok {
			t.Errorf("timer %d did not fire", i)
		}
	}
}

// A zero Fake keeps its time once first used: it starts at the epoch once,
// not at every call.
func TestZeroFakeKeepsItsTime(t *testing.T) {
	var f clock.Fake
	f.Advance(time.Second)
	if got, want := f.Now(), epoch.Add(time.Second); !got.Equal(want) {
		t.Fatalf("zero Fake after Advance(1s): Now() = %v, want %v", got, want)
	}
}

// Sleep(1ns) blocks like any positive d: only d <= 0 returns at once.
func TestFakeSleepOneNanosecondBlocks(t *testing.T) {
	f := clock.NewFake()
	done := make(chan error, 1)
	go func() { done <- f.Sleep(context.Background(), 1) }()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	armed := make(chan error, 1)
	go func() { armed <- f.BlockUntil(ctx, 1) }()
	select {
	case err := <-done:
		t.Fatalf("Sleep(1ns) returned %v before any Advance", err)
	case err := <-armed:
		if err != nil {
			t.Fatalf("Sleep(1ns) armed no timer: BlockUntil = %v", err)
		}
	}
	f.Advance(1)
	if err := recvWithin(t, done, "Sleep(1ns) to return after Advance(1ns)"); err != nil {
		t.Fatalf("Sleep = %v, want nil", err)
	}
}

// The bound counts from the first firing at the instant the Advance starts
// at: a timer due now that re-arms itself fires exactly 1<<20 times, too.
func TestFakeSelfRearmingTimerDueNowPanicsPastBound(t *testing.T) {
	f := clock.NewFake()
	n := 0
	var tm clock.Timer
	tm = f.AfterFunc(0, func() {
		n++
		if n > maxFiringsPerInstant {
			return // past the bound: Advance should have panicked
		}
		tm.Reset(0)
	})
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		f.Advance(time.Second)
	}()
	r := recvWithinFor(t, done, time.Minute, "Advance with a timer due now that re-arms itself with Reset(0) to return or panic")
	if msg, _ := r.(string); !strings.HasPrefix(msg, "clock: more than 1048576 timer firings at 2000-01-01 00:00:00 +0000 UTC") {
		t.Fatalf("panic = %#v, want the bound's at the epoch", r)
	}
	if n != maxFiringsPerInstant {
		t.Fatalf("callback ran %d times before the panic, want %d", n, maxFiringsPerInstant)
	}
}

// An Advance that ran callbacks on this goroutine leaves no mark on it: a
// Sleep it makes afterwards blocks, and returns, as any other.
func TestFakeSleepAfterAnAdvanceThatRanCallbacks(t *testing.T) {
	f := clock.NewFake()
	ran := false
	f.AfterFunc(0, func() { ran = true })
	f.Advance(0)
	if !ran {
		t.Fatal("the callback did not run")
	}
	moved := make(chan struct{})
	go func() {
		defer close(moved)
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		defer cancel()
		if f.BlockUntil(ctx, 1) == nil {
			f.Advance(time.Second)
		}
	}()
	if err := f.Sleep(context.Background(), time.Second); err != nil {
		t.Fatalf("Sleep = %v, want nil", err)
	}
	recvWithin(t, moved, "the other goroutine's Advance to return")
}

// NewTimer(1ns) is armed like any positive d: only d <= 0 sends at once.
func TestFakeNewTimerOneNanosecondWaitsForAdvance(t *testing.T) {
	f := clock.NewFake()
	tm := f.NewTimer(1)
	if v, ok := received(tm.C()); ok {
		t.Fatalf("NewTimer(1ns) sent %v before any Advance", v)
	}
	f.Advance(1)
	if v, ok := received(tm.C()); !ok || !v.Equal(epoch.Add(1)) {
		t.Fatalf("after Advance(1ns): %v, %v; want %v, true", v, ok, epoch.Add(1))
	}
}
