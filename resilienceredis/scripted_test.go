package resilienceredis

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// scripted answers a client's script round trips without a server: reply
// answers each (by the script's hash), on the caller's goroutine. The
// client bounds its round trips by the context's deadline, so that the
// breaker makes them on the caller's goroutine: it runs in a
// testing/synctest bubble, whose clock the test moves to the nanosecond.
// Any other command goes to an address no server listens on.
type scripted struct {
	*redis.Client
	mu    sync.Mutex
	calls []scriptCall
	reply func(c scriptCall) (any, error)
}

// scriptCall is one script round trip: the script's hash, keys and args.
type scriptCall struct {
	sha  string
	keys []string
	args []any
}

// errUnreachable is the error of a scripted round trip that fails.
var errUnreachable = errors.New("test: Redis unreachable")

// newScripted returns a client whose scripts reply answers (nil: every
// round trip fails with errUnreachable). Create it outside the bubble.
func newScripted(t *testing.T, reply func(c scriptCall) (any, error)) *scripted {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: time.Second, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	if reply == nil {
		reply = func(scriptCall) (any, error) { return nil, errUnreachable }
	}
	s := &scripted{Client: c, reply: reply}
	c.AddHook(s)
	return s
}

func (s *scripted) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s *scripted) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (s *scripted) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		rc, ok := cmd.(*redis.Cmd)
		a := cmd.Args()
		if !ok || (cmd.Name() != "evalsha" && cmd.Name() != "eval") || len(a) < 3 {
			return next(ctx, cmd)
		}
		sha, _ := a[1].(string)
		if cmd.Name() == "eval" {
			sha = "" // the script's text
		}
		n, _ := a[2].(int)
		c := scriptCall{sha: sha}
		for _, k := range a[3 : 3+n] {
			ks, _ := k.(string)
			c.keys = append(c.keys, ks)
		}
		c.args = a[3+n:]
		s.mu.Lock()
		s.calls = append(s.calls, c)
		reply := s.reply
		s.mu.Unlock()
		v, err := reply(c)
		if err != nil {
			rc.SetErr(err)
			return err
		}
		rc.SetVal(v)
		return nil
	}
}

// setReply replaces the answer to later round trips.
func (s *scripted) setReply(reply func(c scriptCall) (any, error)) {
	s.mu.Lock()
	s.reply = reply
	s.mu.Unlock()
}

// count returns the round trips of the script s (all of them for nil).
func (s *scripted) count(script *redis.Script) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		if script == nil || c.sha == script.Hash() {
			n++
		}
	}
	return n
}

// last returns the last round trip of script, and whether there was one.
func (s *scripted) last(script *redis.Script) (scriptCall, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.calls) - 1; i >= 0; i-- {
		if s.calls[i].sha == script.Hash() {
			return s.calls[i], true
		}
	}
	return scriptCall{}, false
}

// stateReply is a script's reply: epoch ep (as Redis sends it, a string),
// generation gen, state st, remaining µs, verdict, no other rules.
func stateReply(ep string, gen, st, remaining, verdict int64) []any {
	return []any{ep, gen, st, remaining, verdict, ""}
}
