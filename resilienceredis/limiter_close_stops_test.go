package resilienceredis

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// blockHook holds a command of the client until its context ends (unless
// deaf) or release is closed, and says on started (buffered) that it
// holds one and on ended with which error its context ended (nil:
// released). match picks the command.
type blockHook struct {
	match   func(redis.Cmder) bool
	deaf    bool // a client that does not give up when the context ends
	release chan struct{}
	started chan struct{}
	ended   chan error
}

func newBlockHook(match func(redis.Cmder) bool) blockHook {
	return blockHook{match: match, release: make(chan struct{}), started: make(chan struct{}, 1), ended: make(chan error, 1)}
}

func (h blockHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h blockHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.match(cmd) {
			return next(ctx, cmd)
		}
		select {
		case h.started <- struct{}{}:
		default:
		}
		var err error
		done := ctx.Done()
		if h.deaf {
			done = nil
		}
		select {
		case <-done:
			err = ctx.Err()
		case <-h.release:
		}
		select {
		case h.ended <- err:
		default:
		}
		if err != nil {
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}
func (h blockHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// waitFor fails t if c says nothing within 5s.
func waitFor[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: nothing within 5s", what)
		panic("unreachable")
	}
}

// Close stops the check of the server running in the background (it does
// not only wait for it): the check's round trip in flight ends by Close's
// cancellation, not by its own timeout (a second).
func TestLimiterCloseStopsTheCheck(t *testing.T) {
	hook := newBlockHook(func(c redis.Cmder) bool { return c.Name() == "config" })
	rdb := newClient(t)
	rdb.AddHook(hook)
	l := NewLimiter(rdb, "closestops", slow, 5, WithPrefix(testPrefix(t)), WithTimeout(5*time.Second))
	if !l.Allow(ctxFor(t)) { // answered by Redis: starts the check, whose CONFIG GET the hook holds
		t.Fatal("the first Allow was refused")
	}
	waitFor(t, hook.started, "the check of the server")
	l.Close()
	select {
	case err := <-hook.ended: // Close waited for it
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the check's round trip ended with %v, want context.Canceled: Close did not stop it", err)
		}
	default:
		t.Error("Close returned before the check of the server in the background ended")
	}
}

// Close waits for the round trips in flight on goroutines of the limiter
// (a client without ContextTimeoutEnabled): one that outlived Timeout,
// and which the client has not given up, holds Close until it ends.
func TestLimiterCloseWaitsForRoundTripsInFlight(t *testing.T) {
	hook := newBlockHook(func(c redis.Cmder) bool {
		a := c.Args()
		return c.Name() == "evalsha" && len(a) > 1 && a[1] == gcraScript.Hash()
	})
	hook.deaf = true
	rdb := newClient(t)
	rdb.AddHook(hook)
	l := NewLimiter(rdb, "closeinflight", slow, 5, WithPrefix(testPrefix(t)), WithTimeout(time.Millisecond), WithProbeInterval(time.Hour))
	l.Allow(ctxFor(t)) // the round trip outlives Timeout: the fallback decides, and it goes on
	waitFor(t, hook.started, "the round trip")
	closed := make(chan struct{})
	go func() { l.Close(); close(closed) }()
	time.Sleep(10 * time.Millisecond) // let Close start (a Close that does not wait returns now)
	select {
	case <-closed:
		t.Error("Close returned while a round trip of the limiter was in flight")
	default:
	}
	close(hook.release)
	waitFor(t, closed, "Close after the round trip ended")
}
