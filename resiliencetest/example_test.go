package resiliencetest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
	"github.com/f0b5b96b/resilience/resiliencetest"
)

// A pipeline under test against a dependency that is down for a minute, on
// a fake clock that Drive moves whenever the pipeline waits.
func Example() {
	fake := clock.NewFake()
	dep := resiliencetest.NewDependency("ok", resiliencetest.Timeline(fake,
		resiliencetest.Step{At: 0, Fault: resiliencetest.Fail(nil)},
		resiliencetest.Step{At: time.Minute, Fault: resiliencetest.Healthy()},
	))
	b := breaker.New(breaker.WithThreshold(3), breaker.WithCooldown(30*time.Second), breaker.WithClock(fake))
	p := resilience.Then(
		retry.New[string](retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(time.Second)), retry.WithClock(fake)),
		breaker.Policy[string](b),
	)
	for range 4 {
		var v string
		var err error
		_ = resiliencetest.Drive(fake, time.Second, func() { v, err = p.Do(context.Background(), dep.Call) })
		fmt.Printf("%q, refused %v; %d calls reached it; breaker %v\n", v, errors.Is(err, resilience.ErrRefused), dep.Calls(), b.State())
		fake.Advance(20 * time.Second)
	}
	// The second call trips the breaker; the third, refused, fails fast
	// (the retry does not wait out the cooldown left, the refusal's
	// Retry-After); the fourth, after the cooldown and the outage, is the
	// trial and closes the breaker.

	// Output:
	// "", refused false; 2 calls reached it; breaker closed
	// "", refused true; 3 calls reached it; breaker open
	// "", refused true; 3 calls reached it; breaker open
	// "ok", refused false; 4 calls reached it; breaker closed
}

func ExampleNewDependency() {
	dep := resiliencetest.NewDependency(42, resiliencetest.Healthy())
	v, err := dep.Call(context.Background())
	fmt.Println(v, err, dep.Calls())
	// Output: 42 <nil> 1
}

func ExampleDependency_Counts() {
	dep := resiliencetest.NewDependency(1, resiliencetest.Sequence(resiliencetest.Fail(nil), resiliencetest.Healthy()))
	for range 3 {
		_, _ = dep.Call(context.Background())
	}
	fmt.Printf("%+v\n", dep.Counts())
	// Output: {Calls:3 Successes:2 Failures:1 Panics:0 InFlight:0 MaxInFlight:1}
}

func ExampleDependency_Set() {
	dep := resiliencetest.NewDependency("ok", resiliencetest.Healthy())
	dep.Set(resiliencetest.Fail(errors.New("db: connection refused"))) // it goes down now
	_, err := dep.Call(context.Background())
	fmt.Println(err)
	// Output: db: connection refused
}

func ExampleFault_Inject() {
	err := resiliencetest.Fail(nil).Inject(context.Background())
	fmt.Println(err, errors.Is(err, resiliencetest.ErrInjected))
	// Output: resiliencetest: injected failure true
}

func ExampleHealthy() {
	fmt.Println(resiliencetest.Healthy().Inject(context.Background()), resiliencetest.Fault{})
	// Output: <nil> healthy
}

func ExampleFail() {
	dep := resiliencetest.NewDependency(0, resiliencetest.Fail(errors.New("503 service unavailable")))
	_, err := dep.Call(context.Background())
	fmt.Println(err)
	// Output: 503 service unavailable
}

func ExampleFailRate() {
	// A third of the calls fail; the seed makes it the same third each run.
	dep := resiliencetest.NewDependency(0, resiliencetest.FailRate(1.0/3, 1))
	for range 3000 {
		_, _ = dep.Call(context.Background())
	}
	c := dep.Counts()
	fmt.Println(c.Failures > 900 && c.Failures < 1100, c.Successes+c.Failures)
	// Output: true 3000
}

func ExampleRetryAfter() {
	err := resiliencetest.RetryAfter(2 * time.Second).Inject(context.Background())
	d, ok := resilience.RetryAfter(err)
	fmt.Println(err)
	fmt.Println(d, ok)
	// Output:
	// resiliencetest: injected failure, retry after 2s
	// 2s true
}

func ExampleHang() {
	// The call blocks until the timeout (on the fake clock) gives up on it.
	fake := clock.NewFake()
	dep := resiliencetest.NewDependency(0, resiliencetest.Hang())
	p := timeout.New[int](time.Second, timeout.WithClock(fake))
	var err error
	_ = resiliencetest.Drive(fake, time.Second, func() { _, err = p.Do(context.Background(), dep.Call) })
	fmt.Println(err)
	// Output: timeout: call exceeded 1s
}

func ExamplePanic() {
	defer func() { fmt.Println("recovered:", recover()) }()
	_ = resiliencetest.Panic("boom").Inject(context.Background())
	// Output: recovered: boom
}

func ExampleDelay() {
	fake := clock.NewFake()
	start := fake.Now()
	slow := resiliencetest.Delay(fake, resiliencetest.Fixed(250*time.Millisecond))
	_ = resiliencetest.Drive(fake, 50*time.Millisecond, func() { _ = slow.Inject(context.Background()) })
	fmt.Println(fake.Now().Sub(start))
	// Output: 250ms
}

func ExampleFixed() {
	fmt.Println(resiliencetest.Fixed(10 * time.Millisecond).Draw())
	// Output: 10ms
}

func ExampleUniform() {
	l := resiliencetest.Uniform(10*time.Millisecond, 20*time.Millisecond, 1)
	d := l.Draw()
	fmt.Println(l, d >= 10*time.Millisecond && d <= 20*time.Millisecond)
	// Output: uniform(10ms, 20ms, seed 1) true
}

func ExampleExponential() {
	l := resiliencetest.Exponential(20*time.Millisecond, 1)
	var sum time.Duration
	for range 10000 {
		sum += l.Draw()
	}
	mean := sum / 10000
	fmt.Println(l, mean > 19*time.Millisecond && mean < 21*time.Millisecond)
	// Output: exponential(20ms, seed 1) true
}

func ExampleTimeline() {
	fake := clock.NewFake()
	f := resiliencetest.Timeline(fake,
		resiliencetest.Step{At: 0, Fault: resiliencetest.Healthy()},
		resiliencetest.Step{At: 10 * time.Second, Fault: resiliencetest.Fail(nil)},
		resiliencetest.Step{At: 20 * time.Second, Fault: resiliencetest.Hang()},
		resiliencetest.Step{At: 30 * time.Second, Fault: resiliencetest.Healthy()},
	)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // so that the hanging phase returns at once
	for range 4 {
		fmt.Println(f.Inject(ctx))
		fake.Advance(10 * time.Second)
	}
	// Output:
	// <nil>
	// resiliencetest: injected failure
	// context canceled
	// <nil>
}

func ExampleSequence() {
	f := resiliencetest.Sequence(resiliencetest.Fail(nil), resiliencetest.RetryAfter(time.Second), resiliencetest.Healthy())
	for range 4 {
		fmt.Println(f.Inject(context.Background()))
	}
	// Output:
	// resiliencetest: injected failure
	// resiliencetest: injected failure, retry after 1s
	// <nil>
	// <nil>
}

func ExampleChain() {
	fake := clock.NewFake()
	start := fake.Now()
	f := resiliencetest.Chain(resiliencetest.Delay(fake, resiliencetest.Fixed(time.Second)), resiliencetest.Fail(nil))
	var err error
	_ = resiliencetest.Drive(fake, time.Second, func() { err = f.Inject(context.Background()) })
	fmt.Println(f)
	fmt.Println(err, "after", fake.Now().Sub(start))
	// Output:
	// chain(delay(fixed(1s)), fail)
	// resiliencetest: injected failure after 1s
}

func ExampleDrive() {
	fake := clock.NewFake()
	start := fake.Now()
	p := retry.New[int](retry.WithAttempts(4), retry.WithBackoff(backoff.Exponential(time.Second, 2, time.Minute)), retry.WithClock(fake))
	dep := resiliencetest.NewDependency(0, resiliencetest.Fail(nil))
	_ = resiliencetest.Drive(fake, time.Second, func() { _, _ = p.Do(context.Background(), dep.Call) })
	fmt.Println(dep.Calls(), "calls in", fake.Now().Sub(start), "of virtual time")
	// Output: 4 calls in 7s of virtual time
}

func ExampleFunc() {
	// A fault of your own: the first call of every ten fails.
	n := 0
	f := resiliencetest.Func("every-tenth", func(context.Context) error {
		n++
		if n%10 == 1 {
			return errors.New("busy")
		}
		return nil
	})
	dep := resiliencetest.NewDependency(0, f)
	for range 20 {
		_, _ = dep.Call(context.Background())
	}
	fmt.Println(f, dep.Counts().Failures)
	// Output: every-tenth 2
}
