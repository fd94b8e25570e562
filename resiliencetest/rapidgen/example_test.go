package rapidgen_test

import (
	"context"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/resiliencetest"
	"github.com/f0b5b96b/resilience/resiliencetest/rapidgen"
)

// In a property, draw with Draw(t, label); Example draws one value outside
// a property, as these examples do.

func ExampleFault() {
	fake := clock.NewFake()
	f := rapidgen.Fault(fake, rapidgen.Fail).Example(1)
	err := f.Inject(context.Background())
	fmt.Println(err == nil || err == resiliencetest.ErrInjected)
	// Output: true
}

func ExampleTimeline() {
	fake := clock.NewFake()
	outage := rapidgen.Timeline(fake, time.Minute, rapidgen.Healthy, rapidgen.Fail).Example(1)
	dep := resiliencetest.NewDependency(1, outage)
	for range 4 {
		_, _ = dep.Call(context.Background())
		fake.Advance(20 * time.Second)
	}
	fmt.Println(dep.Calls())
	// Output: 4
}

func ExampleLatency() {
	l := rapidgen.Latency().Example(1)
	d := l.Draw()
	fmt.Println(d >= 0 && d <= 250*time.Second)
	// Output: true
}

func ExampleDuration() {
	d := rapidgen.Duration(time.Second, time.Minute).Example(1)
	fmt.Println(d >= time.Second && d <= time.Minute, d%time.Millisecond == 0)
	// Output: true true
}

func ExampleBackoff() {
	s := rapidgen.Backoff().Example(1)
	fmt.Println(s.Max() > 0)
	// Output: true
}

func ExampleRetry() {
	fake := clock.NewFake()
	rs := rapidgen.Retry().Example(1)
	p := retry.New[int](rs.Options(fake)...)
	fmt.Println(p)
	// Output: retry
}

func ExampleBreaker() {
	fake := clock.NewFake()
	bs := rapidgen.Breaker().Example(1)
	b := breaker.New(bs.Options(fake)...)
	fmt.Println(b.State())
	// Output: closed
}

func ExampleLimiter() {
	fake := clock.NewFake()
	l := rapidgen.Limiter().Example(1).New(fake)
	fmt.Println(l.Allow()) // a new bucket is full
	// Output: true
}
