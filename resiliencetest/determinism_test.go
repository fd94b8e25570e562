package resiliencetest_test

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// outcome is what one driven call came to: its error and the virtual time
// it took.
type outcome struct {
	Err     string
	Elapsed time.Duration
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A 50 ms op under a 200 ms timeout, driven with a step of the op's
// latency: the timeout's timer is armed before the op's, and the call
// returns while the timeout's timer is still armed; Drive must neither move
// the clock before the op has armed its timer nor after the call returned.
func TestDriveTimeoutOverDelayIsDeterministic(t *testing.T) {
	const runs = 1000
	seen := map[outcome]int{}
	for range runs {
		fake := clock.NewFake()
		start := fake.Now()
		p := timeout.New[struct{}](200*time.Millisecond, timeout.WithClock(fake))
		op := resiliencetest.NewDependency(struct{}{}, resiliencetest.Delay(fake, resiliencetest.Fixed(50*time.Millisecond)))
		var err error
		if derr := resiliencetest.Drive(fake, 50*time.Millisecond, func() { _, err = p.Do(context.Background(), op.Call) }); derr != nil {
			t.Fatalf("Drive = %v", derr)
		}
		seen[outcome{errString(err), fake.Now().Sub(start)}]++
	}
	want := map[outcome]int{{Err: "", Elapsed: 50 * time.Millisecond}: runs}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Fatalf("outcomes over %d runs mismatch (-want +got):\n%s", runs, diff)
	}
}

// driveMany drives build's call runs times, each on a fresh fake, and
// counts the outcomes.
func driveMany(t *testing.T, runs int, step time.Duration, build func(fake *clock.Fake) func() error) map[outcome]int {
	t.Helper()
	seen := map[outcome]int{}
	for range runs {
		fake := clock.NewFake()
		start := fake.Now()
		call := build(fake)
		var err error
		if derr := resiliencetest.Drive(fake, step, func() { err = call() }); derr != nil {
			t.Fatalf("Drive = %v", derr)
		}
		seen[outcome{errString(err), fake.Now().Sub(start)}]++
	}
	return seen
}

// A timeout and the op's delay that end at the same instant: the timeout's
// timer, armed first, fires first, and the op sees its context end before
// its own timer fires, on every run.
func TestDriveCoincidingTimersFireInArmingOrder(t *testing.T) {
	const runs = 300
	seen := driveMany(t, runs, time.Millisecond, func(fake *clock.Fake) func() error {
		p := timeout.New[struct{}](50*time.Millisecond, timeout.WithClock(fake))
		op := resiliencetest.NewDependency(struct{}{}, resiliencetest.Delay(fake, resiliencetest.Fixed(50*time.Millisecond)))
		return func() error { _, err := p.Do(context.Background(), op.Call); return err }
	})
	want := map[outcome]int{{Err: "timeout: call exceeded 50ms", Elapsed: 50 * time.Millisecond}: runs}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Fatalf("outcomes over %d runs mismatch (-want +got):\n%s", runs, diff)
	}
}

// A schedule the random pipelines found: a hedge over a bulkhead of one
// slot under a timeout, over a 19 ms op. The call succeeds at 19 ms, not
// one step later.
func TestDriveHedgeOverBulkheadRegression(t *testing.T) {
	const runs = 300
	seen := driveMany(t, runs, time.Millisecond, func(fake *clock.Fake) func() error {
		p := resilience.Then(
			timeout.New[int](252*time.Millisecond, timeout.WithClock(fake)),
			hedge.New[int](83*time.Millisecond, hedge.WithMaxHedges(1), hedge.WithClock(fake)),
			bulkhead.Policy[int](bulkhead.New(1, bulkhead.WithMaxQueue(4), bulkhead.WithMaxWait(84*time.Millisecond), bulkhead.WithClock(fake))),
		)
		dep := resiliencetest.NewDependency(1, resiliencetest.Delay(fake, resiliencetest.Fixed(19*time.Millisecond)))
		return func() error { _, err := p.Do(context.Background(), dep.Call); return err }
	})
	want := map[outcome]int{{Err: "", Elapsed: 19 * time.Millisecond}: runs}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Fatalf("outcomes over %d runs mismatch (-want +got):\n%s", runs, diff)
	}
}

// The step does not change where the clock moves: a retry over a timeout
// over a hanging op ends at the same instant for a step of 1 ns and of an
// hour.
func TestDriveOutcomeDoesNotDependOnStep(t *testing.T) {
	for _, step := range []time.Duration{time.Nanosecond, 7 * time.Millisecond, time.Hour} {
		seen := driveMany(t, 20, step, func(fake *clock.Fake) func() error {
			p := resilience.Then(
				retry.New[int](retry.WithAttempts(3), retry.WithBackoff(backoff.Constant(30*time.Millisecond)), retry.WithClock(fake)),
				timeout.New[int](100*time.Millisecond, timeout.WithClock(fake)),
			)
			dep := resiliencetest.NewDependency(1, resiliencetest.Hang())
			return func() error { _, err := p.Do(context.Background(), dep.Call); return err }
		})
		want := map[outcome]int{{Err: "retry: gave up after 3 attempts: timeout: call exceeded 100ms", Elapsed: 3*100*time.Millisecond + 2*30*time.Millisecond}: 20}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Fatalf("step %v: outcomes mismatch (-want +got):\n%s", step, diff)
		}
	}
}

// A goroutine that existed before Drive began, busy, is not waited for; one
// that the call starts is, even after its creator has exited.
func TestDriveWaitsForTheCallsGoroutinesOnly(t *testing.T) {
	stop := make(chan struct{})
	spinning := make(chan struct{})
	go func() { // started before Drive: never blocked until the end
		close(spinning)
		for {
			select {
			case <-stop:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	<-spinning
	defer close(stop)
	for range 20 {
		fake := clock.NewFake()
		var order []string
		var mu sync.Mutex
		record := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
		err := resiliencetest.Drive(fake, time.Millisecond, func() {
			late := make(chan struct{})
			go func() { // exits at once; its child is still of the pipeline
				go func() {
					for range 1000 { // busy before it arms its timer
						runtime.Gosched()
					}
					_ = fake.Sleep(context.Background(), 10*time.Millisecond)
					record("child@" + fake.Now().Sub(epochOf(fake)).String())
					close(late)
				}()
			}()
			_ = fake.Sleep(context.Background(), 20*time.Millisecond)
			record("call@" + fake.Now().Sub(epochOf(fake)).String())
			<-late
		})
		if err != nil {
			t.Fatalf("Drive = %v", err)
		}
		if diff := cmp.Diff([]string{"child@10ms", "call@20ms"}, order); diff != "" {
			t.Fatalf("wake-up order mismatch (-want +got):\n%s", diff)
		}
	}
}

// epochOf is the instant a new Fake starts at.
func epochOf(*clock.Fake) time.Time { return clock.NewFake().Now() }

// When Drive returns, the goroutines the call left behind are blocked or
// gone: what they do on their way out is done.
func TestDriveReturnsOnceLeftoversSettle(t *testing.T) {
	for range 50 {
		var finished atomic.Bool
		err := resiliencetest.Drive(clock.NewFake(), time.Millisecond, func() {
			go func() {
				for range 200 {
					runtime.Gosched()
				}
				finished.Store(true)
			}()
		})
		if err != nil {
			t.Fatalf("Drive = %v", err)
		}
		if !finished.Load() {
			t.Fatal("Drive returned while a goroutine the call started was still running")
		}
	}
}

// A goroutine that an earlier Drive on the same fake counted in, blocked on
// the fake when that Drive returned, is still of the pipeline in the next
// Drive: when its timer wakes it, the next timer waits for it.
func TestDriveKeepsEarlierCallsGoroutines(t *testing.T) {
	for range 20 {
		fake := clock.NewFake()
		var order []string
		var mu sync.Mutex
		record := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
		left := make(chan struct{})
		if err := resiliencetest.Drive(fake, time.Millisecond, func() {
			go func() { // left behind, asleep on the fake
				defer close(left)
				_ = fake.Sleep(context.Background(), 10*time.Millisecond)
				for range 1000 {
					runtime.Gosched()
				}
				_ = fake.Sleep(context.Background(), 5*time.Millisecond)
				record("left@" + fake.Now().Sub(epochOf(fake)).String())
			}()
		}); err != nil {
			t.Fatalf("first Drive = %v", err)
		}
		if err := resiliencetest.Drive(fake, time.Millisecond, func() {
			_ = fake.Sleep(context.Background(), 20*time.Millisecond)
			record("call@" + fake.Now().Sub(epochOf(fake)).String())
			<-left
		}); err != nil {
			t.Fatalf("second Drive = %v", err)
		}
		if diff := cmp.Diff([]string{"left@15ms", "call@20ms"}, order); diff != "" {
			t.Fatalf("wake-up order mismatch (-want +got):\n%s", diff)
		}
	}
}

// The caller's context, cancelled by a timer of the fake armed before the
// call, ends at the same instant as the timeout and the op's delay: the
// caller's timer, armed first, fires first, on every run.
func TestDriveCallersContextTimerFiresInArmingOrder(t *testing.T) {
	const runs = 300
	seen := driveMany(t, runs, time.Millisecond, func(fake *clock.Fake) func() error {
		ctx, cancel := context.WithCancel(context.Background())
		fake.AfterFunc(50*time.Millisecond, cancel)
		p := timeout.New[struct{}](50*time.Millisecond, timeout.WithClock(fake))
		op := resiliencetest.NewDependency(struct{}{}, resiliencetest.Delay(fake, resiliencetest.Fixed(50*time.Millisecond)))
		return func() error { _, err := p.Do(ctx, op.Call); return err }
	})
	want := map[outcome]int{{Err: "context canceled", Elapsed: 50 * time.Millisecond}: runs}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Fatalf("outcomes over %d runs mismatch (-want +got):\n%s", runs, diff)
	}
}

// Inside a testing/synctest bubble Drive works the same.
func TestDriveInsideBubbleIsDeterministic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const runs = 100
		seen := driveMany(t, runs, 50*time.Millisecond, func(fake *clock.Fake) func() error {
			p := timeout.New[struct{}](200*time.Millisecond, timeout.WithClock(fake))
			op := resiliencetest.NewDependency(struct{}{}, resiliencetest.Delay(fake, resiliencetest.Fixed(50*time.Millisecond)))
			return func() error { _, err := p.Do(context.Background(), op.Call); return err }
		})
		want := map[outcome]int{{Err: "", Elapsed: 50 * time.Millisecond}: runs}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Fatalf("outcomes over %d runs mismatch (-want +got):\n%s", runs, diff)
		}
	})
}
