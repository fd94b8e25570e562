package ratelimit_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// liveness bounds the calls of callsThatNeverWait. It is a bound for
// failure only, never an assertion of speed: the calls take microseconds.
const liveness = 2 * time.Second

// TestMain first makes the calls that the documentation says never wait
// (Allow, AllowN, Tokens, Reserve and Cancel, SetRate and SetBurst, a Wait
// refused at once, the Keyed's calls, the snapshots) and fails the test
// binary, naming the call, if they have not all returned within liveness:
// a call that spins or blocks would otherwise hang whichever test made it
// first, and show only as the binary's timeout. (A goroutine that spins is
// not durably blocked, so a synctest bubble cannot report it.)
func TestMain(m *testing.M) {
	var step atomic.Pointer[string]
	start := "the start"
	step.Store(&start)
	done := make(chan struct{})
	go func() {
		defer close(done)
		callsThatNeverWait(func(s string) { step.Store(&s) })
	}()
	select {
	case <-done:
	case <-time.After(liveness):
		fmt.Fprintf(os.Stderr, "ratelimit: %s did not return within %v (a call that never waits)\n", *step.Load(), liveness)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// callsThatNeverWait makes each call that returns at once by the
// documentation, calling at with its name first. It checks no result: the
// tests do that; here only that each returns.
func callsThatNeverWait(at func(string)) {
	ctx := context.Background()
	fake := clock.NewFake()
	at("New")
	l := ratelimit.New(ratelimit.Every(time.Second), 2, ratelimit.WithClock(fake), ratelimit.WithName("live"))
	for i := range 3 {
		at(fmt.Sprintf("Allow %d on a fake clock", i+1))
		l.Allow()
	}
	at("AllowN(2) on an empty bucket")
	l.AllowN(2)
	at("AllowN(0)")
	l.AllowN(0)
	at("Tokens")
	l.Tokens()
	at("Wait with a deadline before the token (on the limiter's clock)")
	_ = l.Wait(deadlineCtx{ctx, fake.Now().Add(time.Millisecond)})
	done, cancel := context.WithCancel(ctx)
	cancel()
	at("Wait with a done ctx")
	_ = l.Wait(done)
	at("WaitN(0)")
	_ = l.WaitN(ctx, 0)
	at("WaitN beyond the burst")
	_ = l.WaitN(ctx, 3)
	fake.Advance(2 * time.Second)
	at("Wait for a token that is there")
	_ = l.Wait(ctx)
	at("Reserve")
	r := l.Reserve()
	r.Delay()
	at("Reserve of a token due later")
	r2 := l.Reserve()
	r2.Delay()
	at("Cancel of the later reservation")
	r2.Cancel()
	at("Cancel")
	r.Cancel()
	r.Cancel()
	at("ReserveN beyond the burst")
	l.ReserveN(3).Cancel()
	at("Policy")
	_, _ = ratelimit.Policy[int](l).Do(ctx, func(context.Context) (int, error) { return 0, nil })
	_, _ = ratelimit.Policy[int](l).Do(ctx, func(context.Context) (int, error) { return 0, nil })
	at("SetRate")
	l.SetRate(3)
	at("Allow after SetRate")
	l.Allow()
	at("Reserve after SetRate")
	l.Reserve().Cancel()
	at("SetBurst")
	l.SetBurst(3)
	at("AllowN after SetBurst")
	l.AllowN(3)
	l.Tokens()
	at("SetRate(Off)")
	l.SetRate(resilience.Off)
	l.Allow()
	l.Tokens()
	at("SetRate(+Inf)")
	l.SetRate(math.Inf(1))
	l.Allow()
	l.AllowN(5)
	_ = l.Wait(ctx)
	l.Tokens()
	at("SetRate back from +Inf")
	l.SetRate(2)
	l.Allow()
	at("Stats and Snapshot")
	l.Stats()
	l.Snapshot()

	m := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake), ratelimit.WithMaxWait(time.Millisecond))
	m.Allow()
	at("Wait longer than MaxWait")
	_ = m.Wait(ctx)
	at("WaitPolicy refusing")
	_, _ = ratelimit.WaitPolicy[int](m).Do(ctx, func(context.Context) (int, error) { return 0, nil })

	for _, rate := range []float64{ratelimit.Every(time.Hour), 3} {
		rl := ratelimit.New(rate, 1, ratelimit.WithMaxWait(time.Millisecond))
		at(fmt.Sprintf("Allow on the real clock at rate %v", rate))
		rl.Allow()
		rl.Allow()
		at(fmt.Sprintf("Wait longer than MaxWait on the real clock at rate %v", rate))
		_ = rl.Wait(ctx)
		at(fmt.Sprintf("Tokens on the real clock at rate %v", rate))
		rl.Tokens()
	}

	k := ratelimit.NewKeyed[float64](ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake), ratelimit.WithMaxKeys(2))
	for _, key := range []float64{1, 2, 3, 1, math.NaN(), math.NaN(), 2, 2} {
		at(fmt.Sprintf("Keyed.Allow(%v)", key))
		k.Allow(key)
	}
	at("Keyed.SetRate")
	k.SetRate(2)
	at("Keyed.SetBurst")
	k.SetBurst(2)
	at("Keyed.Snapshot")
	k.Snapshot()
	k.Len()
	k.Name()
	at("KeyedPolicy")
	_, _ = ratelimit.KeyedPolicy[int](k, func(context.Context) float64 { return 4 }).Do(ctx, func(context.Context) (int, error) { return 0, nil })
}
