package resilienceredis

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// afterHook calls the function in after, if any, once Redis has answered
// a run of the GCRA script.
type afterHook struct{ after *atomic.Pointer[func()] }

func (h afterHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h afterHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err == nil && isScript(cmd, gcraScript) {
			if f := h.after.Load(); f != nil {
				(*f)()
			}
		}
		return err
	}
}
func (h afterHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// WaitN on tokens that are there now takes them and returns nil without
// waiting: "it returns nil once they are taken".
func TestLimiterWaitNTokensThereNow(t *testing.T) {
	const rounds = 5
	l := NewLimiter(newClient(t), "waitnow", slow, rounds, WithPrefix(testPrefix(t)), WithTimeout(5*time.Second))
	defer l.Close()
	for i := range rounds {
		if err := l.WaitN(ctxFor(t), 1); err != nil {
			t.Fatalf("round %d: WaitN on a token there now: %v, want nil", i, err)
		}
	}
	settled(l)
	if l.Allow(ctxFor(t)) {
		t.Errorf("Allow found a token left of %d after %d WaitN: a WaitN gave its token back", rounds, rounds)
	}
}

// A context that ends as Redis answers (on a client with
// ContextTimeoutEnabled, whose round trip runs on the caller's goroutine,
// and on one without) ends WaitN with ctx.Err(), even on tokens that are
// there now, and the tokens are given back: "ctx.Err() as soon as ctx
// ends while Redis reserves the tokens".
func TestLimiterWaitNEndedAsRedisAnswersGivesBack(t *testing.T) {
	for _, ctxTimeouts := range []bool{true, false} {
		var after atomic.Pointer[func()]
		rdb := clientWith(t, redistest.Addr(t), ctxTimeouts)
		rdb.AddHook(afterHook{&after})
		const rounds = 5
		l := NewLimiter(rdb, "waitnow", slow, rounds+1, WithPrefix(testPrefix(t)), WithTimeout(5*time.Second))
		defer l.Close()
		if !l.Allow(ctxFor(t)) { // loads the script: the rounds' EVALSHA finds it
			t.Fatal("the first Allow was refused")
		}
		for i := range rounds {
			ctx, cancel := context.WithCancel(ctxFor(t))
			end := func() { cancel() }
			after.Store(&end)
			err := l.WaitN(ctx, 1)
			after.Store(nil)
			cancel()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("ContextTimeoutEnabled %v, round %d: WaitN, the context ending as Redis answered: %v, want context.Canceled", ctxTimeouts, i, err)
			}
			settled(l)
		}
		for i := range rounds {
			if !l.Allow(ctxFor(t)) {
				t.Errorf("ContextTimeoutEnabled %v: Allow %d of %d refused: a cancelled WaitN kept its token", ctxTimeouts, i+1, rounds)
			}
		}
	}
}

// lateCtx is a context that ends as a Wait's sleep does: once armed, its
// Done sleeps past the wait before it returns its closed channel, so that
// WaitN's select finds both the wait over and the context ended (as a
// goroutine woken late does).
type lateCtx struct {
	context.Context
	armed       atomic.Bool
	sleep       time.Duration
	open, ended chan struct{}
	over        atomic.Bool
}

func (c *lateCtx) Done() <-chan struct{} {
	if !c.armed.Load() {
		return c.open
	}
	time.Sleep(c.sleep)
	c.over.Store(true)
	return c.ended
}

func (c *lateCtx) Err() error {
	if c.over.Load() {
		return context.Canceled
	}
	return nil
}

// A Wait whose context ends once its wait is over has its token: nil,
// whichever of the two its select sees first. (A machine that wakes the
// Wait late finds both; a deadline just past the token's due time then
// gave DeadlineExceeded after the full sleep.)
func TestLimiterWaitEndedAfterItsWaitTakesTheToken(t *testing.T) {
	var after atomic.Pointer[func()]
	rdb := newClient(t)
	rdb.AddHook(afterHook{&after})
	l := NewLimiter(rdb, "lateend", 1000, 1, WithPrefix(testPrefix(t)), WithTimeout(5*time.Second)) // T = 1ms
	defer l.Close()
	const rounds = 20
	for i := range rounds {
		if !l.Allow(ctxFor(t)) { // the bucket empty: the Wait waits up to 1ms
			redistest.Eventually(t, 2*time.Second, "a token", func() (bool, string) { return l.Allow(ctxFor(t)), "refused" })
		}
		ended := make(chan struct{})
		close(ended)
		ctx := &lateCtx{Context: context.Background(), sleep: 5 * time.Millisecond, open: make(chan struct{}), ended: ended}
		arm := func() { ctx.armed.Store(true) }
		after.Store(&arm)
		err := l.Wait(ctx)
		after.Store(nil)
		if err != nil {
			t.Fatalf("round %d: Wait whose context ended once its wait was over: %v, want nil", i, err)
		}
	}
}
