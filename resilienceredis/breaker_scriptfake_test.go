package resilienceredis

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// brFake answers a breaker's scripts without a server: a hook on the
// client replies to each script command (EVALSHA) with what answer says,
// and never dials. It lets a test choose the shared state an instance
// reads, make a round trip fail, and count the round trips.
type brFake struct {
	mu      sync.Mutex
	answer  func(script string, args []any) ([]any, error)
	scripts []string // the scripts run, in order
}

// brScriptName names the breaker's script whose hash is sha.
func brScriptName(sha string) string {
	for name, s := range map[string]*redis.Script{
		"read": readScript, "reset": resetScript, "flush": flushScript,
		"acquire": acquireScript, "report": reportScript, "shared": sharedScript,
	} {
		if s.Hash() == sha {
			return name
		}
	}
	return "?"
}

// reply is a script's reply {ep, gen, st, remaining µs, verdict, rules}.
func brReply(ep, gen int64, st int64, remaining time.Duration, verdict int64) []any {
	return []any{ep, gen, st, remaining.Microseconds(), verdict, ""}
}

func (f *brFake) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f *brFake) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (f *brFake) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if cmd.Name() != "evalsha" || len(args) < 3 {
			cmd.SetErr(redis.ErrClosed)
			return redis.ErrClosed
		}
		sha, _ := args[1].(string)
		name := brScriptName(sha)
		f.mu.Lock()
		f.scripts = append(f.scripts, name)
		answer := f.answer
		f.mu.Unlock()
		// args: evalsha sha numkeys key... arg...: one key.
		v, err := answer(name, args[4:])
		if err != nil {
			cmd.SetErr(err)
			return err
		}
		cmd.(*redis.Cmd).SetVal(v)
		return nil
	}
}

// set makes answer the fake's replies from now on.
func (f *brFake) set(answer func(script string, args []any) ([]any, error)) {
	f.mu.Lock()
	f.answer = answer
	f.mu.Unlock()
}

// runs returns the scripts run so far.
func (f *brFake) runs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.scripts...)
}

// brFakeBreaker returns an instance without its goroutines on a client that
// only fake answers (every script replies the closed state of epoch 7,
// generation 1, until the test sets other answers).
func brFakeBreaker(t *testing.T, opts ...BreakerOption) (*Breaker, *brFake) {
	t.Helper()
	f := &brFake{}
	f.set(func(string, []any) ([]any, error) { return brReply(7, 1, 0, 0, 1), nil })
	// ContextTimeoutEnabled: round trips run on the caller's goroutine,
	// not on one of their own with a channel from a pool, which a test in
	// a synctest bubble must not leave to the tests after it.
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, ContextTimeoutEnabled: true})
	rdb.AddHook(f)
	t.Cleanup(func() { rdb.Close() })
	opts = append([]BreakerOption{WithTimeout(5 * time.Second)}, opts...)
	b := newBreaker(rdb, "svc", opts)
	t.Cleanup(func() { b.Close() })
	return b, f
}
