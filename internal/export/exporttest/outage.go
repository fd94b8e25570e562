package exporttest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Outage runs a pipeline (call > retry > attempt > breaker) through an
// outage on clk: two healthy calls of 10ms, a call whose two attempts fail
// with down after 20ms each and trip the breaker, a call the open breaker
// refuses, then, after the cooldown, a trial that closes it and one more
// success. call and attempt are the layers of the exporter's Measure named
// "prices" with 2 attempts, on clk, or zero Policies (the retry's duration
// events, to obs, time the calls and attempts then); the retry and the breaker, both named
// "prices", report to obs; reg gets the breaker, a fake bulkhead "db"
// (limit 8, 3 in flight, 2 queued, 5 refused) and a fake rate limiter
// "api" (rate 100, burst 20, -1.5 tokens, 7 refused). Outage fails t at
// once if a call's error is not the one the script expects or the
// breaker does not end closed.
func Outage(t testing.TB, clk *clock.Fake, reg *telemetry.Registry, obs telemetry.Observer, call, attempt resilience.Policy[string], down error) {
	t.Helper()
	b := breaker.New(breaker.WithName("prices"), breaker.WithThreshold(2), breaker.WithCooldown(10*time.Second),
		breaker.WithClock(clk), breaker.WithObserver(obs))
	p := resilience.Then(
		call,
		retry.New[string](retry.WithName("prices"), retry.WithAttempts(2), retry.WithBackoff(backoff.Constant(0)),
			retry.WithMaxWait(time.Second), retry.WithClock(clk), retry.WithObserver(obs),
			retry.WithMaxRefusalWait(resilience.Off)), // a refusal's hint is bounded by MaxWait alone: a gave_up
		attempt,
		breaker.Policy[string](b),
	)
	for _, g := range []telemetry.Guard{
		b,
		FakeGuard{telemetry.Snapshot{Kind: bulkhead.Kind, Name: "db", Refused: 5,
			Values: []telemetry.Value{
				{Name: "limit", Unit: "{call}", Help: "The most calls the bulkhead lets run at once.", Value: 8},
				{Name: "in_flight", Unit: "{call}", Help: "Calls holding a slot of the bulkhead now.", Value: 3},
				{Name: "queued", Unit: "{call}", Help: "Calls waiting in the bulkhead's queue now.", Value: 2},
			}}},
		FakeGuard{telemetry.Snapshot{Kind: ratelimit.Kind, Name: "api", Refused: 7,
			Values: []telemetry.Value{
				{Name: "rate", Unit: "{token}/s", Help: "Tokens the rate limiter adds per second.", Value: 100},
				{Name: "burst", Unit: "{token}", Help: "The most tokens the rate limiter's bucket holds.", Value: 20},
				{Name: "tokens", Unit: "{token}", Help: "Tokens in the rate limiter's bucket now (negative: owed to waiters).", Value: -1.5},
			}}},
	} {
		if err := reg.Register(g); err != nil {
			t.Fatal(err)
		}
	}

	healthy := func(ctx context.Context) (string, error) { clk.Advance(10 * time.Millisecond); return "ok", nil }
	failing := func(ctx context.Context) (string, error) { clk.Advance(20 * time.Millisecond); return "", down }
	ctx := context.Background()
	do := func(op resilience.Op[string], wantErr error) {
		t.Helper()
		_, err := p.Do(ctx, op)
		if (wantErr == nil) != (err == nil) || (wantErr != nil && !errors.Is(err, wantErr)) {
			t.Fatalf("call: err = %v, want %v", err, wantErr)
		}
	}
	do(healthy, nil)
	do(healthy, nil)
	do(failing, down)             // two attempts fail: the breaker opens
	do(healthy, breaker.ErrOpen)  // refused; the hint (10s) exceeds MaxWait: no retry
	clk.Advance(10 * time.Second) // the cooldown ends
	do(healthy, nil)              // the trial succeeds: closed
	do(healthy, nil)              // counted in the new closed state
	if got := b.State(); got != breaker.Closed {
		t.Fatalf("breaker state = %v, want closed", got)
	}
}

// FakeGuard is a guard whose snapshot is set by the test, as a guard of
// a user's own is: the exporters know it only by what it describes.
type FakeGuard struct{ S telemetry.Snapshot }

// Name returns g.S.Name.
func (g FakeGuard) Name() string { return g.S.Name }

// Snapshot returns g.S.
func (g FakeGuard) Snapshot() telemetry.Snapshot { return g.S }
