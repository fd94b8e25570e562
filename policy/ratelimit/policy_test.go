package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

func TestPolicyRefusesAtOnce(t *testing.T) {
	fake := clock.NewFake()
	l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(fake), ratelimit.WithName("api"))
	p := ratelimit.Policy[string](l)
	calls := 0
	op := func(context.Context) (string, error) { calls++; return "ok", nil }
	if v, err := p.Do(t.Context(), op); v != "ok" || err != nil {
		t.Fatalf("Do = %q, %v", v, err)
	}
	fake.Advance(300 * time.Millisecond)
	v, err := p.Do(t.Context(), op)
	if v != "" || calls != 1 {
		t.Fatalf("refused call returned %q and ran the op %d times in all", v, calls)
	}
	checkLimited(t, err, "api", 700*time.Millisecond)
	fake.Advance(699 * time.Millisecond)
	if _, err := p.Do(t.Context(), op); !errors.Is(err, ratelimit.ErrLimited) {
		t.Fatalf("Do 1ns early = %v, want refused", err)
	}
	fake.Advance(time.Millisecond)
	if _, err := p.Do(t.Context(), op); err != nil || calls != 2 {
		t.Fatalf("Do after RetryAfter = %v (calls %d)", err, calls)
	}
}

func TestWaitPolicyWaits(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithMaxWait(2*time.Second), ratelimit.WithName("api"))
		p := ratelimit.WaitPolicy[int](l)
		if got := p.String(); got != "ratelimit(api)" {
			t.Fatalf("String() = %q", got)
		}
		start := time.Now()
		op := func(context.Context) (int, error) { return int(time.Since(start) / time.Second), nil }
		for want := range 3 {
			if v, err := p.Do(t.Context(), op); v != want || err != nil {
				t.Fatalf("Do = %d, %v; want %d, nil", v, err, want)
			}
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := p.Do(ctx, op); err != context.Canceled {
			t.Fatalf("Do(done ctx) = %v", err)
		}
	})
}

func TestWaitPolicyRefusesBeyondMaxWait(t *testing.T) {
	bubble(t, func(t *testing.T) {
		l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithMaxWait(1500*time.Millisecond))
		p := ratelimit.WaitPolicy[int](l)
		op := func(context.Context) (int, error) { return 1, nil }
		_ = l.AllowN(1)
		done := make(chan error)
		go func() { _, err := p.Do(t.Context(), op); done <- err }() // due at 1s
		synctest.Wait()
		_, err := p.Do(t.Context(), op) // would be due at 2s
		checkLimited(t, err, "", 2*time.Second)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

func TestPolicyNilPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"Policy":     func() { ratelimit.Policy[int](nil) },
		"WaitPolicy": func() { ratelimit.WaitPolicy[int](nil) },
	} {
		func() {
			defer func() {
				if r := recover(); r != "ratelimit: Policy of a nil *Limiter" {
					t.Fatalf("%s(nil) panicked with %v", name, r)
				}
			}()
			f()
		}()
	}
}

// A call whose caller already gave up neither runs nor spends a token.
func TestPolicyCancelledCallTakesNoToken(t *testing.T) {
	l := ratelimit.New(ratelimit.Every(time.Second), 1, ratelimit.WithClock(clock.NewFake()))
	p := ratelimit.Policy[int](l)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ran := false
	if _, err := p.Do(ctx, func(context.Context) (int, error) { ran = true; return 1, nil }); err != context.Canceled || ran {
		t.Fatalf("cancelled call: err %v, op ran %v; want context.Canceled and not run", err, ran)
	}
	if !l.Allow() {
		t.Error("the cancelled call spent the only token")
	}
}
