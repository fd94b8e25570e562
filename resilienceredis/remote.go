package resilienceredis

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// errSlow is the error of a round trip that Redis did not answer within
// the guard's Timeout.
var errSlow = errors.New("resilienceredis: Redis did not answer within the timeout")

// remote is the Redis side of a guard: the client, the bound on each round
// trip, and whether Redis is taken as unreachable for now.
type remote struct {
	rdb     redis.UniversalClient
	timeout time.Duration
	probe   time.Duration
	inline  bool // the client bounds its round trips by the context's deadline
	// downUntil is when, after a failed round trip, a decision may try
	// Redis again (UnixNano); 0 while Redis answers.
	downUntil atomic.Int64
	wg        sync.WaitGroup // round trips still running
}

type result struct {
	v   any
	err error
}

var resultPool = sync.Pool{New: func() any { return make(chan result, 1) }}

// newRemote returns the remote of rdb.
func newRemote(rdb redis.UniversalClient, timeout, probe time.Duration) remote {
	return remote{rdb: rdb, timeout: timeout, probe: probe, inline: honoursDeadlines(rdb)}
}

// honoursDeadlines reports whether rdb bounds every wait of a command
// (for a connection, the reply, a retry's backoff) by the context's
// deadline: a client built with ContextTimeoutEnabled.
func honoursDeadlines(rdb redis.UniversalClient) bool {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	}
	return false
}

// run runs script on Redis and returns its reply, waiting at most r.timeout
// (and not beyond ctx). With a client that honours the context's deadline
// the round trip runs on the caller's goroutine; with any other, in a
// goroutine of its own, so that no caller waits on Redis longer than the
// bound whatever the client's own timeouts: a round trip that outlives the
// bound then goes on in the background, under a context that has ended,
// until the client gives it up. run returns errSlow when the bound passed,
// ctx.Err() when ctx ended first, and the client's error otherwise.
func (r *remote) run(ctx context.Context, s *redis.Script, keys []string, args []any) (any, error) {
	if r.inline {
		if d, ok := ctx.Deadline(); ok && time.Until(d) <= r.timeout {
			// The caller's deadline comes first: it is the bound.
			v, err := s.Run(ctx, r.rdb, keys, args...).Result()
			if err != nil && err != redis.Nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return v, err
		}
	}
	rctx, cancel := context.WithTimeout(ctx, r.timeout)
	if r.inline {
		v, err := s.Run(rctx, r.rdb, keys, args...).Result()
		cancel()
		if err != nil && err != redis.Nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, errSlow
			}
		}
		return v, err
	}
	ch := resultPool.Get().(chan result)
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		v, err := s.Run(rctx, r.rdb, keys, args...).Result()
		ch <- result{v, err}
		cancel() // after the send: the caller must not see the end of rctx first
	}()
	select {
	case res := <-ch:
		resultPool.Put(ch)
		return res.v, res.err
	case <-rctx.Done():
		select {
		case res := <-ch: // sent before the goroutine's cancel ended rctx
			resultPool.Put(ch)
			return res.v, res.err
		default:
		}
		// The goroutine will still send on ch: the channel is not reused.
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, errSlow
	}
}

// usable reports whether a decision at now (UnixNano) may ask Redis: Redis
// has answered last time, or ProbeInterval has passed since it did not and
// this caller won the probe.
func (r *remote) usable(now int64) bool {
	d := r.downUntil.Load()
	return d == 0 || now >= d && r.downUntil.CompareAndSwap(d, now+int64(r.probe))
}

// failed records a failed round trip at now: decisions go local for
// ProbeInterval.
func (r *remote) failed(now int64) { r.downUntil.Store(now + int64(r.probe)) }

// answered records a round trip that Redis answered.
func (r *remote) answered() {
	if r.downUntil.Load() != 0 {
		r.downUntil.Store(0)
	}
}
