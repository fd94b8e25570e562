package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// waitFor is code under test: it takes its time from a Clock.
func waitFor(ctx context.Context, c clock.Clock, d time.Duration) string {
	start := c.Now()
	if err := c.Sleep(ctx, d); err != nil {
		return "gave up: " + err.Error()
	}
	return fmt.Sprintf("waited %v", c.Now().Sub(start))
}

// A policy takes a Clock; production passes Real, tests pass a Fake.
func ExampleClock() {
	f := clock.NewFake()
	result := make(chan string, 1)
	go func() { result <- waitFor(context.Background(), f, 2*time.Second) }()

	// A test bounds its waits, so that a bug fails it instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := f.BlockUntil(ctx, 1); err != nil { // the Sleep has started
		fmt.Println("no Sleep started:", err)
		return
	}
	f.Advance(2 * time.Second)
	select {
	case r := <-result:
		fmt.Println(r)
	case <-ctx.Done():
		fmt.Println("no result:", ctx.Err())
	}
	// Output: waited 2s
}

func ExampleReal() {
	c := clock.Real()
	fmt.Println(c == clock.Real())

	// Sleep returns at once for d <= 0 or a finished context.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fmt.Println(c.Sleep(context.Background(), 0))
	fmt.Println(c.Sleep(ctx, time.Hour))
	// Output:
	// true
	// <nil>
	// context canceled
}

func ExampleNewFake() {
	f := clock.NewFake()
	fmt.Println(f.Now())
	// Output: 2000-01-01 00:00:00 +0000 UTC
}

func ExampleFake_Now() {
	f := clock.NewFake()
	f.Advance(90 * time.Minute)
	fmt.Println(f.Now().Format(time.TimeOnly))
	// Output: 01:30:00
}

func ExampleFake_NewTimer() {
	f := clock.NewFake()
	t := f.NewTimer(time.Second)
	f.Advance(3 * time.Second)
	// The value is sent before Advance returns; it is the timer's deadline.
	select {
	case v := <-t.C():
		fmt.Println(v.Format(time.TimeOnly))
	default:
		fmt.Println("did not fire")
	}
	// Output: 00:00:01
}

func ExampleFake_AfterFunc() {
	f := clock.NewFake()
	f.AfterFunc(time.Second, func() {
		fmt.Println("fired at", f.Now().Format(time.TimeOnly))
		// A callback may arm more timers; they fire within the same Advance
		// when due.
		f.AfterFunc(time.Second, func() {
			fmt.Println("chained at", f.Now().Format(time.TimeOnly))
		})
	})
	f.Advance(5 * time.Second)
	fmt.Println("now", f.Now().Format(time.TimeOnly))
	// Output:
	// fired at 00:00:01
	// chained at 00:00:02
	// now 00:00:05
}

func ExampleFake_Sleep() {
	f := clock.NewFake()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Sleep(ctx, time.Hour) }()

	// Bound the test's own waits.
	wait, stop := context.WithTimeout(context.Background(), 2*time.Second)
	defer stop()
	if err := f.BlockUntil(wait, 1); err != nil {
		fmt.Println("no Sleep started:", err)
		return
	}
	cancel()
	select {
	case err := <-done:
		fmt.Println(err)
	case <-wait.Done():
		fmt.Println("Sleep did not return:", wait.Err())
	}
	fmt.Println("waiters:", f.Waiters())
	// Output:
	// context canceled
	// waiters: 0
}

func ExampleFake_Advance() {
	f := clock.NewFake()
	for _, d := range []time.Duration{3 * time.Second, time.Second, 2 * time.Second} {
		f.AfterFunc(d, func() { fmt.Println("timer", d) })
	}
	f.Advance(2 * time.Second)
	fmt.Println("--")
	f.Advance(time.Second)
	// Output:
	// timer 1s
	// timer 2s
	// --
	// timer 3s
}

func ExampleFake_Set() {
	f := clock.NewFake()
	f.AfterFunc(time.Hour, func() { fmt.Println("fired") })

	f.Set(f.Now().Add(-time.Hour)) // back: fires nothing
	fmt.Println(f.Now().Format(time.DateTime))
	f.Set(time.Date(2000, 1, 1, 1, 0, 0, 0, time.UTC)) // forward: like Advance
	fmt.Println(f.Now().Format(time.DateTime))
	// Output:
	// 1999-12-31 23:00:00
	// fired
	// 2000-01-01 01:00:00
}

func ExampleFake_Waiters() {
	f := clock.NewFake()
	t := f.NewTimer(time.Second)
	f.AfterFunc(time.Second, func() {})
	fmt.Println(f.Waiters())
	t.Stop()
	fmt.Println(f.Waiters())
	f.Advance(time.Second)
	fmt.Println(f.Waiters())
	// Output:
	// 2
	// 1
	// 0
}

func ExampleFake_BlockUntil() {
	f := clock.NewFake()
	done := make(chan struct{}, 3)
	for range 3 {
		go func() {
			_ = f.Sleep(context.Background(), time.Minute)
			done <- struct{}{}
		}()
	}
	// Wait, without sleeping, until all three goroutines are asleep; a
	// test bounds the wait, so that a bug fails it instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := f.BlockUntil(ctx, 3); err != nil {
		fmt.Println("not all asleep:", err)
		return
	}
	f.Advance(time.Minute)
	for range 3 {
		select {
		case <-done:
		case <-ctx.Done():
			fmt.Println("not all woke:", ctx.Err())
			return
		}
	}
	fmt.Println("all woke at", f.Now().Format(time.TimeOnly))
	// Output: all woke at 00:01:00
}

func ExampleTimer_Stop() {
	f := clock.NewFake()
	t := f.NewTimer(time.Second)
	fmt.Println(t.Stop()) // stopped it
	fmt.Println(t.Stop()) // already stopped
	f.Advance(time.Second)
	select {
	case <-t.C():
		fmt.Println("fired")
	default:
		fmt.Println("did not fire")
	}
	// Output:
	// true
	// false
	// did not fire
}

func ExampleTimer_Reset() {
	f := clock.NewFake()
	t := f.NewTimer(time.Second)
	fmt.Println(t.Reset(5 * time.Second)) // was active
	f.Advance(time.Second)
	select {
	case <-t.C():
		fmt.Println("fired early")
	default:
	}
	f.Advance(4 * time.Second)
	select {
	case v := <-t.C():
		fmt.Println(v.Format(time.TimeOnly))
	default:
		fmt.Println("did not fire")
	}
	fmt.Println(t.Reset(time.Second)) // had fired
	// Output:
	// true
	// 00:00:05
	// false
}

func ExampleTimer_C() {
	f := clock.NewFake()
	fmt.Println(f.AfterFunc(time.Second, func() {}).C() == nil)
	t := f.NewTimer(0) // d <= 0 fires at once, before NewTimer returns
	select {
	case v := <-t.C():
		fmt.Println(v.Format(time.TimeOnly))
	default:
		fmt.Println("did not fire")
	}
	// Output:
	// true
	// 00:00:00
}
