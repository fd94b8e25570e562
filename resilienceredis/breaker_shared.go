package resilienceredis

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/redis/go-redis/v9"
)

// SharedState is a breaker's shared state as Redis holds it, from
// [Breaker.Shared].
type SharedState struct {
	// Exists is false when Redis holds no state for the breaker (none was
	// made yet, or it was lost); the other fields are then zero.
	Exists bool
	// Epoch is the random number drawn when the state was created; a
	// state created again has another.
	Epoch int64
	// Generation is bumped by every transition, from 1.
	Generation uint64
	// State is the stored state. An open state whose cooldown has passed
	// reads Open until a script makes it half-open (the next round trip
	// of any instance).
	State breaker.State
	// ConsecutiveFailures is the fleet's run of failures while closed,
	// in the order the batches reached Redis.
	ConsecutiveFailures int64
	// Successes, Failures and SlowCalls are the counts of the shared
	// window (WindowDuration, by the server's clock, as this instance's
	// rules read it) in this generation.
	Successes, Failures, SlowCalls int64
	// TrialsOut is the half-open trials admitted and not yet reported
	// or expired; TrialSuccesses the successful ones reported in this
	// half-open generation.
	TrialsOut, TrialSuccesses int
}

// sharedScript reads the state's hash as it is, with the server's time
// (µs, plus the shift ARGV[1]): it writes nothing.
var sharedScript = redis.NewScript(`
local t = redis.call('TIME')
return {t[1] * 1000000 + t[2] + tonumber(ARGV[1]), redis.call('HGETALL', KEYS[1])}
`)

// Shared reads the breaker's shared state from Redis, as it is there,
// for telemetry and checks: it changes nothing (a cooldown that has
// passed is not turned half-open, the instance's view is not changed).
// It waits on Redis at most Timeout (and not beyond ctx), and returns
// ctx.Err(), the client's error, one matching [ErrUnusable] when Redis
// refuses the breaker's commands (permissions, the key's type,
// scripting), or an error saying that Redis did not answer in time; after
// Close, [ErrClosed] without asking Redis. Shared is safe for
// simultaneous use.
func (b *Breaker) Shared(ctx context.Context) (SharedState, error) {
	if b.keys == nil {
		zeroValue("Breaker", "Shared", "NewBreaker")
	}
	if b.closed.Load() {
		return SharedState{}, ErrClosed
	}
	v, err := b.rem.run(ctx, sharedScript, b.keys, []any{b.shift.Load()})
	if err != nil {
		return SharedState{}, classify(err)
	}
	r, _ := v.([]any)
	if len(r) != 2 {
		return SharedState{}, fmt.Errorf("resilienceredis: unexpected reply %v", v)
	}
	now, _ := r[0].(int64)
	all, _ := r[1].([]any)
	h := make(map[string]string, len(all)/2)
	for i := 0; i+1 < len(all); i += 2 {
		k, _ := all[i].(string)
		x, _ := all[i+1].(string)
		h[k] = x
	}
	if h["ep"] == "" {
		return SharedState{}, nil
	}
	num := func(k string) int64 { n, _ := strconv.ParseInt(h[k], 10, 64); return n }
	s := SharedState{Exists: true, Epoch: num("ep"), Generation: uint64(num("gen")), State: breaker.State(num("st")),
		ConsecutiveFailures: num("streak"), TrialSuccesses: int(num("ok")), TrialsOut: len(strings.Fields(h["trials"])) / 2}
	buckets := int64(b.cfg.WindowBuckets)
	width := max(b.cfg.WindowDuration.Microseconds()/buckets, 1)
	idx := now / width
	for k := range buckets {
		j := strconv.FormatInt(k, 10)
		if t, err := strconv.ParseInt(h["wt"+j], 10, 64); err == nil && t > idx-buckets {
			s.Successes += num("ws" + j)
			s.Failures += num("wf" + j)
			s.SlowCalls += num("ww" + j)
		}
	}
	return s, nil
}
