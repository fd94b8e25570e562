package resilienceredis

// This file's name sorts before close_test.go on purpose: Go runs a
// package's tests in the order of their files, and a Close that never
// returns must fail a bounded test here before an unbounded Close of a
// later test hangs.

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// closeWithin runs f on a goroutine of its own and fails t if it has not
// returned within d (a bound for failure only); it returns a channel
// closed when f returns.
func closeWithin(t *testing.T, d time.Duration, what string, f func()) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s has not returned within %v", what, d)
	}
	return done
}

// Close stops the budget's flusher and returns.
func TestRetryBudgetCloseReturns(t *testing.T) {
	b := NewRetryBudget(newClient(t), "closereturns", WithPrefix(testPrefix(t)), WithFlushInterval(time.Millisecond))
	b.Deposit()
	closeWithin(t, 2*time.Second, "Close", func() { b.Close() })
}

// Close waits for a flush's round trip in flight to end, with either
// client setting (the round trip on the flusher's goroutine, or on one of
// its own); a second Close meanwhile does nothing and returns at once;
// once the round trip ends the first Close returns and the budget is
// local for good.
func TestRetryBudgetCloseWaitsForRoundTrip(t *testing.T) {
	for _, ctxTimeouts := range []bool{false, true} {
		t.Run("ContextTimeoutEnabled="+strconv.FormatBool(ctxTimeouts), func(t *testing.T) {
			rdb := clientWith(t, redistest.Addr(t), ctxTimeouts)
			entered, release := make(chan struct{}, 1), make(chan struct{})
			var released bool
			free := func() {
				if !released {
					released = true
					close(release)
				}
			}
			t.Cleanup(free)
			// A round trip that has not ended: it ends when the test
			// releases it, whatever its context says.
			rdb.AddHook(evalHook(func(ctx context.Context, cmd redis.Cmder, next redis.ProcessHook) error {
				select {
				case entered <- struct{}{}:
				default:
				}
				<-release
				return errors.New("test: the round trip ended")
			}))
			b := NewRetryBudget(rdb, "closewaits", WithPrefix(testPrefix(t)), WithFlushInterval(time.Millisecond), WithTimeout(time.Minute))
			b.Deposit()
			select {
			case <-entered:
			case <-time.After(5 * time.Second):
				t.Fatal("no flush within 5s")
			}
			first := make(chan struct{})
			go func() {
				defer close(first)
				b.Close()
			}()
			redistest.Eventually(t, 2*time.Second, "Close begun", func() (bool, string) {
				return b.rem.closed.Load(), "Redis still asked"
			})
			closeWithin(t, 2*time.Second, "a second Close while the first waits", func() { b.Close() })
			select {
			case <-first:
				t.Fatal("Close returned while a flush's round trip was in flight")
			case <-time.After(100 * time.Millisecond):
			}
			free()
			select {
			case <-first:
			case <-time.After(5 * time.Second):
				t.Fatal("Close has not returned within 5s of the round trip's end")
			}
			if s := b.Snapshot(); s.State != StateLocal || s.Reason != ErrClosed.Error() {
				t.Errorf("Snapshot after Close = %+v; want State %q, Reason %q", s, StateLocal, ErrClosed)
			}
		})
	}
}
