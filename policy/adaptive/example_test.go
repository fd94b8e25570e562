package adaptive_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// A limiter admits calls up to its limit, 20 at first, and refuses the
// rest at once.
func ExampleNew() {
	lim := adaptive.New(adaptive.WithName("search"))
	ctx := context.Background()
	permits := make([]adaptive.Permit, 20) // held here; real code ends each with Done
	for i := range permits {
		var err error
		if permits[i], err = lim.Acquire(ctx); err != nil {
			panic(err)
		}
	}
	_, err := lim.Acquire(ctx)
	fmt.Println(err)
	fmt.Println(errors.Is(err, adaptive.ErrFull), errors.Is(err, resilience.ErrRefused))
	fmt.Printf("%+v\n", lim.Stats())
	// Output:
	// adaptive: full (search)
	// true true
	// {Limit:20 InFlight:20 Queued:0 Refused:1 Latency:0s Baseline:0s}
}

// Code that calls the dependency itself takes a permit and ends it with
// the call's error; the limit learns from the call's latency and outcome.
func ExampleLimiter_Acquire() {
	lim := adaptive.New()
	query := func(ctx context.Context) error {
		p, err := lim.Acquire(ctx)
		if err != nil {
			return err // refused: shed the call
		}
		err = errors.New("db: timeout") // the call to the dependency
		p.Done(err)                     // a failure: counts as congestion
		return err
	}
	fmt.Println(query(context.Background()))
	// Output:
	// db: timeout
}

// The limiter as a layer of a policy, here with a timeout inside it, so a
// call that hangs ends as a failure the limiter learns from.
func ExamplePolicy() {
	lim := adaptive.New(adaptive.WithName("search"))
	p := resilience.Then(adaptive.Policy[string](lim), timeout.New[string](2*time.Second))
	fmt.Println(p)
	res, err := p.Do(context.Background(), func(ctx context.Context) (string, error) { return "3 results", nil })
	fmt.Println(res, err)
	// Output:
	// adaptive(search) > timeout(2s)
	// 3 results <nil>
}

// With a reserve, normal calls may use only part of the limit; critical
// calls get the rest, so they are shed last.
func ExampleContextWithPriority() {
	lim := adaptive.New(adaptive.WithMinLimit(10), adaptive.WithMaxLimit(10), adaptive.WithReserve(0.2))
	normal := context.Background()
	critical := adaptive.ContextWithPriority(normal, adaptive.Critical)
	count := func(ctx context.Context) (n int) {
		for ; n < 100; n++ { // bounded: far more than the limit
			if _, err := lim.Acquire(ctx); err != nil {
				break
			}
		}
		return n
	}
	fmt.Println("normal calls admitted:", count(normal))
	fmt.Println("critical calls admitted after them:", count(critical))
	// Output:
	// normal calls admitted: 8
	// critical calls admitted after them: 2
}

// With a queue, a caller over the limit waits for a call to end, at most
// MaxWait; callers of higher priority go first.
func ExampleWithMaxQueue() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds every wait below
	defer cancel()
	fake := clock.NewFake() // with MaxWait, the example can see the caller queue
	lim := adaptive.New(adaptive.WithMinLimit(1), adaptive.WithMaxLimit(1), adaptive.WithMaxQueue(4), adaptive.WithMaxWait(time.Second), adaptive.WithClock(fake))
	first, _ := lim.Acquire(ctx)

	got := make(chan error)
	go func() {
		p, err := lim.Acquire(ctx)
		p.Done(nil)
		got <- err
	}()
	_ = fake.BlockUntil(ctx, 1) // the caller is queued
	fmt.Println("queued:", lim.Stats().Queued)
	first.Done(nil) // its slot goes to the caller in line
	fmt.Println(<-got)
	// Output:
	// queued: 1
	// <nil>
}

// The limit moves with the dependency's latency: it grows while calls
// take the baseline latency, and falls when they take longer.
func ExampleLimiter_Stats() {
	fake := clock.NewFake()
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(10))
	window := func(latency time.Duration) {
		n := lim.Stats().Limit
		permits := make([]adaptive.Permit, n)
		for i := range permits {
			permits[i], _ = lim.Acquire(context.Background())
		}
		fake.Advance(latency)
		for i := range permits {
			permits[i].Done(nil)
		}
		fake.Advance(time.Second)
		p, _ := lim.Acquire(context.Background())
		p.Done(context.Canceled) // not counted, but it ends the window
	}
	for _, latency := range []time.Duration{10, 10, 10, 40, 40, 40} {
		window(latency * time.Millisecond)
		s := lim.Stats()
		fmt.Printf("calls at %v: limit %d (latency %v, baseline %v)\n", latency*time.Millisecond, s.Limit, s.Latency, s.Baseline)
	}
	// Output:
	// calls at 10ms: limit 21 (latency 10ms, baseline 10ms)
	// calls at 10ms: limit 22 (latency 10ms, baseline 10ms)
	// calls at 10ms: limit 23 (latency 10ms, baseline 10ms)
	// calls at 40ms: limit 11 (latency 40ms, baseline 10ms)
	// calls at 40ms: limit 5 (latency 40ms, baseline 10ms)
	// calls at 40ms: limit 5 (latency 40ms, baseline 10ms)
}

// An algorithm is chosen with WithAlgorithm; the zero value of each means
// its defaults.
func ExampleWithAlgorithm() {
	for _, alg := range []adaptive.Algorithm{adaptive.Gradient2{}, adaptive.Vegas{}, adaptive.AIMD{Backoff: 0.5}} {
		w := adaptive.Window{Latency: 30 * time.Millisecond, Baseline: 10 * time.Millisecond, Successes: 100, MaxInFlight: 50}
		fmt.Printf("%T: limit 50 -> %.1f after a window at 3× the baseline\n", alg, alg.Next(50, w))
	}
	_ = adaptive.New(adaptive.WithAlgorithm(adaptive.Vegas{}))
	// Output:
	// adaptive.Gradient2: limit 50 -> 25.0 after a window at 3× the baseline
	// adaptive.Vegas: limit 50 -> 21.7 after a window at 3× the baseline
	// adaptive.AIMD: limit 50 -> 25.0 after a window at 3× the baseline
}

// An Algorithm of your own: here, a limit that follows the latency down
// in proportion and grows by 2 otherwise.
func ExampleAlgorithm() {
	alg := proportional{}
	fmt.Println(alg.Next(100, adaptive.Window{Latency: 20 * time.Millisecond, Baseline: 10 * time.Millisecond, Successes: 10}))
	fmt.Println(alg.Next(100, adaptive.Window{Latency: 10 * time.Millisecond, Baseline: 10 * time.Millisecond, Successes: 10}))
	_ = adaptive.New(adaptive.WithAlgorithm(alg))
	// Output:
	// 50
	// 102
}

type proportional struct{}

func (proportional) Next(limit float64, w adaptive.Window) float64 {
	if w.Baseline > 0 && w.Latency > w.Baseline {
		return limit * float64(w.Baseline) / float64(w.Latency)
	}
	return limit + 2
}

// A configuration read from a JSON file, checked, and given to New.
func ExampleConfig_json() {
	b, err := os.ReadFile("testdata/config.json")
	if err != nil {
		panic(err)
	}
	var c adaptive.Config
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	if err := c.Validate(); err != nil {
		panic(err)
	}
	lim := adaptive.New(adaptive.WithConfig(c))
	fmt.Printf("%+v\n", lim.Stats())
	fmt.Println(adaptive.Policy[int](lim))
	// Output:
	// {Limit:20 InFlight:0 Queued:0 Refused:0 Latency:0s Baseline:0s}
	// adaptive(search)
}

// MaxLatency bounds what can be healthy: a window slower than it lowers
// the limit by a tenth at least, whatever the algorithm says.
func ExampleWithMaxLatency() {
	fake := clock.NewFake()
	lim := adaptive.New(adaptive.WithClock(fake), adaptive.WithMaxLatency(500*time.Millisecond), adaptive.WithWindowDuration(time.Second), adaptive.WithWindowCalls(1),
		adaptive.WithInitial(100))
	for range 3 {
		fake.Advance(time.Second)
		p, _ := lim.Acquire(context.Background())
		fake.Advance(2 * time.Second) // a 2s call: above MaxLatency
		p.Done(nil)
		fmt.Println("limit", lim.Stats().Limit)
	}
	// Output:
	// limit 90
	// limit 81
	// limit 72
}
