package timeout_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/policy/timeout"
)

// An op that returns its own error after the deadline fired gets the
// timeout's expiry error back, every time, with WithAbandon too: the policy
// may see the deadline before the op has returned (it returns the bare
// expiry at once), or see both ready (it keeps the op's error, wrapped in
// the expiry); which one happens is up to the scheduler and to select's
// random choice, so the call is made many times, and each order happens.
func TestAbandonLateErrorIsAlwaysExpiry(t *testing.T) {
	errOp := errors.New("op failed")
	synctest.Test(t, func(t *testing.T) {
		p := timeout.New[int](time.Second, timeout.WithAbandon(true))
		op := func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 3, errOp
		}
		kept := 0 // calls whose error kept the op's
		const calls = 20000
		for i := range calls {
			v, err := p.Do(context.Background(), op)
			if !errors.Is(err, timeout.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("call %d: Do = %d, %v; want an error matching ErrTimeout and context.DeadlineExceeded", i, v, err)
			}
			switch msg := err.Error(); {
			case msg == "timeout: call exceeded 1s: op failed" && errors.Is(err, errOp) && v == 3:
				kept++
			case msg == "timeout: call exceeded 1s" && !errors.Is(err, errOp) && v == 0:
			default:
				t.Fatalf("call %d: Do = %d, %q; want 3 and the expiry wrapping the op's error, or 0 and the bare expiry", i, v, msg)
			}
		}
		synctest.Wait() // every abandoned op has returned
		t.Logf("%d of %d calls kept the op's error", kept, calls)
	})
}
