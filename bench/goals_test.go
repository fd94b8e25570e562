package bench

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"testing"

	"github.com/sony/gobreaker/v2"
	"golang.org/x/time/rate"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// BenchmarkGoal holds the paired rows behind the goals table of README.md,
// each ours against its reference, made in turns (see paired); its metric
// resilience/PEER is the ratio of the medians:
//
//   - breaker-closed: Do through a closed breaker, the op succeeds, against
//     gobreaker's Execute; serially and from GOMAXPROCS goroutines.
//   - allow: a limiter's Allow on a bucket that always has tokens, against
//     x/time/rate's Allow.
//   - breaker-floor, breaker-contracts: the floors of breaker-closed, a
//     layer that only calls next.Call, and the least layer that keeps
//     the breaker's two contracts and counts its successes exactly.
//   - hedge: a hedge (delay 1 s) whose first attempt answers at once,
//     against its floor: what any hedge must do for such a call, a
//     cancellable context for the attempts and a timer for the next one
//     (context.WithCancel and time.AfterFunc, then Stop and cancel).
func BenchmarkGoal(b *testing.B) {
	ctx := context.Background()
	for _, parallel := range []bool{false, true} {
		mode := "serial"
		if parallel {
			mode = "parallel"
		}
		b.Run("breaker-closed/"+mode, func(b *testing.B) {
			ours := breaker.Policy[int](breaker.New())
			oursOp := func(context.Context) (int, error) { return 1, nil }
			gb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: "bench"})
			gbOp := func() (int, error) { return 1, nil }
			paired(b, parallel, pairedSpan, []kind{
				{"resilience", func() error { _, err := ours.Do(ctx, oursOp); return err }},
				{"gobreaker", func() error { _, err := gb.Execute(gbOp); return err }},
			})
		})
	}
	b.Run("allow/serial", func(b *testing.B) {
		ours := ratelimit.New(rlRate, rlBurst)
		xrate := rate.NewLimiter(rate.Limit(rlRate), rlBurst)
		paired(b, false, pairedSpan, []kind{
			{"resilience", func() error { return admitted(ours.Allow()) }},
			{"x-time-rate", func() error { return admitted(xrate.Allow()) }},
		})
	})
	b.Run("allow-floor/serial", func(b *testing.B) {
		// The floor of the allow row: what any lock-free token bucket's
		// Allow must do, one clock read (time.Since of a time with a
		// monotonic reading reads only the monotonic clock) and one
		// compare-and-swap of a word that depends on it, against both
		// limiters; and the clock read alone.
		ours := ratelimit.New(rlRate, rlBurst)
		xrate := rate.NewLimiter(rate.Limit(rlRate), rlBurst)
		origin := time.Now()
		var word atomic.Uint64
		paired(b, false, pairedSpan, []kind{
			{"clock-cas", func() error {
				d := uint64(time.Since(origin))
				x := word.Load()
				word.CompareAndSwap(x, max(x, d)+1)
				return nil
			}},
			{"x-time-rate", func() error { return admitted(xrate.Allow()) }},
			{"resilience", func() error { return admitted(ours.Allow()) }},
			{"clock", func() error { clockSink = time.Since(origin); return nil }},
		})
	})
	b.Run("breaker-floor/serial", func(b *testing.B) {
		// The floor of the breaker-closed row: Do through a layer that
		// only calls next.Call, against gobreaker and the breaker.
		pass := resilience.New("pass", func(ctx context.Context, next resilience.Next[int]) (int, error) {
			return next.Call(ctx)
		})
		ours := breaker.Policy[int](breaker.New())
		op := func(context.Context) (int, error) { return 1, nil }
		gb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: "bench"})
		gbOp := func() (int, error) { return 1, nil }
		paired(b, false, pairedSpan, []kind{
			{"pass-layer", func() error { _, err := pass.Do(ctx, op); return err }},
			{"gobreaker", func() error { _, err := gb.Execute(gbOp); return err }},
			{"resilience", func() error { _, err := ours.Do(ctx, op); return err }},
		})
	})
	b.Run("breaker-contracts/serial", func(b *testing.B) {
		// The floor of the breaker-closed row with its two contracts:
		// the least layer that keeps them and counts exactly (a done
		// context is neither run nor counted: ctx.Err(); a panic counts
		// as a failure: a deferred check; the state read; one atomic add
		// for the success), against gobreaker and the breaker.
		var state, successes, failures atomic.Uint64
		contracts := resilience.New("contracts", func(ctx context.Context, next resilience.Next[int]) (v int, err error) {
			if err = ctx.Err(); err != nil {
				return v, err
			}
			if state.Load() != 0 {
				return v, errRefused
			}
			returned := false
			defer func() {
				if !returned {
					failures.Add(1)
				}
			}()
			v, err = next.Call(ctx)
			returned = true
			if err != nil {
				failures.Add(1)
			} else {
				successes.Add(1)
			}
			return v, err
		})
		ours := breaker.Policy[int](breaker.New())
		op := func(context.Context) (int, error) { return 1, nil }
		gb := gobreaker.NewCircuitBreaker[int](gobreaker.Settings{Name: "bench"})
		gbOp := func() (int, error) { return 1, nil }
		paired(b, false, pairedSpan, []kind{
			{"contracts-layer", func() error { _, err := contracts.Do(ctx, op); return err }},
			{"gobreaker", func() error { _, err := gb.Execute(gbOp); return err }},
			{"resilience", func() error { _, err := ours.Do(ctx, op); return err }},
		})
	})
	b.Run("hedge/serial", func(b *testing.B) {
		ours := hedge.New[int](time.Second)
		op := func(context.Context) (int, error) { return 1, nil }
		next := func() {}
		paired(b, false, pairedSpan, []kind{
			{"resilience", func() error { _, err := ours.Do(ctx, op); return err }},
			{"floor", func() error {
				actx, cancel := context.WithCancel(ctx)
				t := time.AfterFunc(time.Second, next)
				_, err := op(actx)
				t.Stop()
				cancel()
				return err
			}},
		})
	})
}

// clockSink keeps the allow-floor row's clock reads.
var clockSink time.Duration

// admitted returns nil if ok, else errRefused. It inlines (a call of
// fmt.Errorf here did not), so that the paired rows' kinds that call a
// limiter pay no call of their own on top of the limiter's, as the floor's
// kinds do not.
func admitted(ok bool) error {
	if !ok {
		return errRefused
	}
	return nil
}

var errRefused = errors.New("refused")
