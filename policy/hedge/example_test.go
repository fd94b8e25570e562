package hedge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/telemetry"
)

// replicas returns an op whose n-th call (from 0) goes to the n-th replica:
// a slow one (false) answers only when its context ends, a fast one (true)
// answers at once. Each call prints when it starts, on clk.
func replicas(clk clock.Clock, fast ...bool) func(context.Context) (string, error) {
	calls := make(chan int, len(fast))
	for i := range fast {
		calls <- i
	}
	start := clk.Now()
	return func(ctx context.Context) (string, error) {
		i := <-calls
		fmt.Printf("replica %d called at %v\n", i, clk.Now().Sub(start))
		started <- i
		if !fast[i] {
			<-ctx.Done()
			return "", ctx.Err()
		}
		return fmt.Sprintf("replica %d", i), nil
	}
}

// started receives the number of each replica called.
var started = make(chan int, 10)

// drive runs do in a goroutine and moves clk forward by delay for each of
// the hedges, once the attempt before it has started, so that the examples
// take no real time. It panics if a step does not happen within 10 s (on
// the real clock): an example never hangs.
func drive[T any](clk *clock.Fake, delay time.Duration, hedges int, do func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := do()
		ch <- result{v, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range hedges {
		await(ctx, started, "an attempt to start")
		if clk.BlockUntil(ctx, 1) != nil { // the hedge timer is armed
			panic("example: no hedge timer armed within 10s")
		}
		clk.Advance(delay)
	}
	await(ctx, started, "the last attempt to start")
	r := await(ctx, ch, "Do to return")
	return r.v, r.err
}

// await receives from ch, or panics naming what it waited for once ctx
// ends.
func await[V any](ctx context.Context, ch <-chan V, what string) V {
	select {
	case v := <-ch:
		return v
	case <-ctx.Done():
		panic("example: waited 10s for " + what)
	}
}

func ExampleNew() {
	clk := clock.NewFake() // production code leaves the clock out
	p := hedge.New[string](50*time.Millisecond, hedge.WithClock(clk))
	fmt.Println(p)

	// The first replica is slow; the hedge, started at 50 ms, answers. The
	// first attempt is cancelled.
	op := replicas(clk, false, true)
	v, err := drive(clk, 50*time.Millisecond, 1, func() (string, error) { return p.Do(context.Background(), op) })
	fmt.Println(v, err)
	// Output:
	// hedge(50ms)
	// replica 0 called at 0s
	// replica 1 called at 50ms
	// replica 1 <nil>
}

func ExampleWithMaxHedges() {
	clk := clock.NewFake()
	p := hedge.New[string](50*time.Millisecond, hedge.WithMaxHedges(2), hedge.WithClock(clk))
	// Hedges start at 50 ms and 100 ms; the third attempt answers first.
	op := replicas(clk, false, false, true)
	v, err := drive(clk, 50*time.Millisecond, 2, func() (string, error) { return p.Do(context.Background(), op) })
	fmt.Println(v, err)
	// Output:
	// replica 0 called at 0s
	// replica 1 called at 50ms
	// replica 2 called at 100ms
	// replica 2 <nil>
}

// unavailable is an HTTP 503 with a Retry-After header, as an error.
type unavailable struct{ after time.Duration }

func (u unavailable) Error() string             { return "503 service unavailable" }
func (u unavailable) RetryAfter() time.Duration { return u.after }

// resetClock is a fake clock that tells on resets each wait to which a
// hedge re-arms its timer, so that an example moves the clock only once
// the wait is set.
type resetClock struct {
	*clock.Fake
	resets chan time.Duration
}

func (c resetClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	return resetTimer{c.Fake.AfterFunc(d, f), c.resets}
}

type resetTimer struct {
	clock.Timer
	resets chan time.Duration
}

func (t resetTimer) Reset(d time.Duration) bool {
	t.resets <- d
	return t.Timer.Reset(d)
}

func ExampleWithMaxWait() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds every wait below
	defer cancel()
	busy := unavailable{3 * time.Second}

	// By default a hint holds the next attempt for at most the delay,
	// 50ms: a Retry-After of 3s starts no hedge, and the call fails at once.
	p := hedge.New[string](50 * time.Millisecond)
	_, err := p.Do(ctx, func(context.Context) (string, error) { return "", busy })
	fmt.Println(err)

	// With a MaxWait of 5s the next attempt waits out the hint (here on a
	// fake clock).
	clk := resetClock{clock.NewFake(), make(chan time.Duration, 10)}
	p = hedge.New[string](50*time.Millisecond, hedge.WithMaxWait(5*time.Second), hedge.WithClock(clk))
	start, calls := clk.Now(), 0
	done := make(chan string, 1)
	go func() {
		v, _ := p.Do(ctx, func(context.Context) (string, error) {
			calls++
			fmt.Printf("attempt %d at %v\n", calls, clk.Now().Sub(start))
			if calls == 1 {
				return "", busy
			}
			return "fresh", nil
		})
		done <- v
	}()
	fmt.Println("waiting", await(ctx, clk.resets, "the wait for the hint"))
	clk.Advance(3 * time.Second)
	fmt.Println(await(ctx, done, "Do to return"))
	// Output:
	// hedge: all 1 attempt failed: 503 service unavailable
	// attempt 1 at 0s
	// waiting 3s
	// attempt 2 at 3s
	// fresh
}

func ExampleWithAccept() {
	errNotFound := errors.New("404 not found")
	// A 404 is an answer, not a failure: it ends the race like a success.
	p := hedge.New[string](50*time.Millisecond, hedge.WithAccept(func(v string, err error) bool {
		return err == nil || errors.Is(err, errNotFound)
	}))
	v, err := p.Do(context.Background(), func(context.Context) (string, error) {
		return "", errNotFound
	})
	fmt.Printf("%q %v\n", v, err)
	// Output:
	// "" 404 not found
}

func ExampleWithClock() {
	clk := clock.NewFake()
	p := hedge.New[string](time.Second, hedge.WithClock(clk))
	op := replicas(clk, false, true)
	v, _ := drive(clk, time.Second, 1, func() (string, error) { return p.Do(context.Background(), op) })
	fmt.Println(v)
	// Output:
	// replica 0 called at 0s
	// replica 1 called at 1s
	// replica 1
}

func ExampleWithConfig() {
	// A configuration read at run time sets its non-zero fields only: the
	// delay stays New's, 50ms, and MaxHedges becomes 2.
	c := hedge.Config[string]{MaxHedges: 2}
	if err := c.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	clk := clock.NewFake()
	p := hedge.New[string](50*time.Millisecond, hedge.WithConfig(c), hedge.WithClock(clk))
	fmt.Println(p)
	op := replicas(clk, false, false, true)
	v, _ := drive(clk, 50*time.Millisecond, 2, func() (string, error) { return p.Do(context.Background(), op) })
	fmt.Println(v)
	// Output:
	// hedge(50ms)
	// replica 0 called at 0s
	// replica 1 called at 50ms
	// replica 2 called at 100ms
	// replica 2
}

// A configuration file holds a Config as JSON, durations as Go duration
// strings; decode it, validate it, and build the policy from it.
func ExampleConfig_json() {
	file := []byte(`{"Delay": "30ms", "MaxHedges": 2}`)
	var c hedge.Config[string]
	if err := json.Unmarshal(file, &c); err != nil {
		fmt.Println(err)
		return
	}
	if err := c.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	p := hedge.New[string](time.Second, hedge.WithConfig(c)) // c.Delay replaces 1s
	fmt.Println(p)
	out, _ := json.Marshal(c)
	fmt.Println(string(out))
	// Output:
	// hedge(30ms)
	// {"Delay":"30ms","MaxHedges":2}
}

func ExampleNew_allFail() {
	p := hedge.New[string](time.Millisecond)
	n := 0
	errs := []error{errors.New("connection reset"), errors.New("503 service unavailable")}
	_, err := p.Do(context.Background(), func(context.Context) (string, error) {
		n++ // attempts run one after the other here: each fails at once
		return "", errs[n-1]
	})
	fmt.Println(err)
	fmt.Println(errors.Is(err, errs[0]), errors.Is(err, errs[1]))
	// Output:
	// hedge: all 2 attempts failed: connection reset; 503 service unavailable
	// true true
}

func ExampleConfig_Validate() {
	fmt.Println(hedge.Config[int]{}.Validate()) // the default configuration
	fmt.Println(hedge.Config[int]{MaxHedges: -1}.Validate())
	// Output:
	// <nil>
	// hedge: MaxHedges must be in [1, 10], or 0 for the default 1, got -1
}

// The delay follows the policy's own latencies: after 100 attempts it is
// their 95th percentile. Here calls answer in 10ms, one in ten in 20ms; a
// call whose first attempt hangs then gets its hedge at 20ms instead of
// New's 1s.
func ExampleWithQuantile() {
	clk := clock.NewFake()
	p := hedge.New[string](time.Second, hedge.WithQuantile(0.95), hedge.WithMinDelay(5*time.Millisecond), hedge.WithMaxDelay(500*time.Millisecond), hedge.WithClock(clk))
	fmt.Println(p)
	ctx := context.Background()
	for i := range 100 {
		d := 10 * time.Millisecond
		if i%10 == 0 {
			d = 20 * time.Millisecond
		}
		_, _ = p.Do(ctx, func(context.Context) (string, error) { clk.Advance(d); return "ok", nil })
	}
	// A call whose first attempt hangs: the hedge answers.
	var n atomic.Int32
	hedged := make(chan time.Duration, 1)
	start := clk.Now()
	v, _ := drive(clk, 20*time.Millisecond, 1, func() (string, error) {
		return p.Do(ctx, func(ctx context.Context) (string, error) {
			first := n.Add(1) == 1
			started <- 0
			if first {
				<-ctx.Done()
				return "", ctx.Err()
			}
			hedged <- clk.Now().Sub(start)
			return "from the hedge", nil
		})
	})
	fmt.Println(v, "after", <-hedged)
	// Output:
	// hedge(p95)
	// from the hedge after 20ms
}

// A budget caps the hedges to a fraction of the calls: here every first
// attempt is slower than the delay, and of 100 calls 5 get a hedge: the
// budget starts with one, and each call adds a twentieth of one.
func ExampleWithBudget() {
	clk := clock.NewFake()
	p := hedge.New[int](time.Millisecond, hedge.WithBudget(0.05), hedge.WithClock(clk))
	var attempts atomic.Int32
	ctx := context.Background()
	for range 100 {
		var n atomic.Int32
		_, _ = p.Do(ctx, func(context.Context) (int, error) {
			attempts.Add(1)
			if n.Add(1) == 1 {
				clk.Advance(3 * time.Millisecond) // the hedge timer fires on the way
			}
			return 1, nil
		})
	}
	fmt.Println("calls 100, hedges", attempts.Load()-100)
	// Output:
	// calls 100, hedges 5
}

func ExampleWithObserver() {
	clk := clock.NewFake()
	// Any telemetry.Observer: a Counter for exporters, a telemetry.Slog
	// for logs; here one that keeps the events, printed after the call.
	var (
		mu     sync.Mutex
		events []telemetry.Event
	)
	obs := telemetry.ObserverFunc(func(e telemetry.Event) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	})
	p := hedge.New[string](50*time.Millisecond, hedge.WithName("profiles"), hedge.WithObserver(obs), hedge.WithClock(clk))

	// Replica 0 is slow: the hedge to replica 1 wins.
	v, err := drive(clk, 50*time.Millisecond, 1, func() (string, error) {
		return p.Do(context.Background(), replicas(clk, false, true))
	})
	fmt.Println(v, err)
	for _, e := range events {
		fmt.Println(e.Type, e.Name, e.Attempt, e.Elapsed)
	}
	// Output:
	// replica 0 called at 0s
	// replica 1 called at 50ms
	// replica 1 <nil>
	// hedge.launched profiles 2 50ms
	// hedge.won profiles 2 50ms
	// hedge.losers_cancelled profiles 1 0s
}
