package resilienceredis

import (
	"context"
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
		if a := cmd.Args(); err == nil && cmd.Name() == "evalsha" && len(a) > 1 && a[1] == gcraScript.Hash() {
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
// waiting: "it returns nil once they are taken". A context that ends just
// after Redis has answered (on a client with ContextTimeoutEnabled, whose
// round trip runs on the caller's goroutine) does not undo that: there is
// no wait for it to end. (A WaitN that waited, even for nothing, would
// see the context end and give the tokens back; the two ends race, so
// each round gives such a WaitN an even chance of showing.)
func TestLimiterWaitNTokensThereNow(t *testing.T) {
	var after atomic.Pointer[func()]
	rdb := clientWith(t, redistest.Addr(t), true)
	rdb.AddHook(afterHook{&after})
	const rounds = 20
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
		if err != nil {
			t.Fatalf("round %d: WaitN on a token there now, the context ending as Redis answered: %v, want nil", i, err)
		}
	}
	if l.Allow(ctxFor(t)) {
		t.Errorf("Allow found a token left of %d: a WaitN gave its token back", rounds+1)
	}
}
