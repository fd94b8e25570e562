package resilienceredis

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// brCloseWithin calls b.Close and fails t if it has not returned within
// 2s (a bound for failure only).
func brCloseWithin(t *testing.T, b *Breaker) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		b.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("Close did not return within 2s")
	}
}

// Close of a running breaker (subscribed, its flusher and deliverer
// waiting) stops its goroutines and returns.
func TestBreakerCloseReturns(t *testing.T) {
	b := NewBreaker(newClient(t), "svc", WithPrefix(testPrefix(t)), WithTimeout(5*time.Second), WithFlushInterval(10*time.Millisecond))
	redistest.Eventually(t, 2*time.Second, "the instance learns the state and subscribes", func() (bool, string) {
		b.mu.Lock()
		ps := b.ps
		b.mu.Unlock()
		return b.ep.Load() != 0 && ps != nil, "not yet"
	})
	brCloseWithin(t, b)
}

// brBlockHook holds every script round trip until its context ends, and a
// little longer, counting those in flight.
type brBlockHook struct {
	started  chan struct{}
	inFlight atomic.Int32
}

func (h *brBlockHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *brBlockHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (h *brBlockHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "evalsha" {
			return next(ctx, cmd)
		}
		h.inFlight.Add(1)
		defer h.inFlight.Add(-1)
		select {
		case h.started <- struct{}{}:
		default:
		}
		<-ctx.Done()
		time.Sleep(20 * time.Millisecond) // the client giving the round trip up
		cmd.SetErr(ctx.Err())
		return ctx.Err()
	}
}

// Close waits for the round trips in flight: when it returns, none is
// left, whether the round trip ran on the flusher's goroutine (a client
// that bounds its waits by the context) or on one of its own.
func TestBreakerCloseWaitsForRoundTrips(t *testing.T) {
	for _, inline := range []bool{true, false} {
		name := "own goroutine"
		if inline {
			name = "inline"
		}
		t.Run(name, func(t *testing.T) {
			rdb := clientWith(t, redistest.Addr(t), inline)
			h := &brBlockHook{started: make(chan struct{}, 1)}
			rdb.AddHook(h)
			b := NewBreaker(rdb, "svc", WithPrefix(testPrefix(t)), WithTimeout(time.Minute))
			select {
			case <-h.started: // the flusher's first read
			case <-time.After(2 * time.Second):
				t.Fatal("no round trip started within 2s")
			}
			brCloseWithin(t, b)
			if n := h.inFlight.Load(); n != 0 {
				t.Errorf("Close returned with %d round trips in flight", n)
			}
		})
	}
}
