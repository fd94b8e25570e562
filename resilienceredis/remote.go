package resilienceredis

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// errSlow is the error of a round trip that Redis did not answer within
// the guard's Timeout.
var errSlow = errors.New("resilienceredis: Redis did not answer within the timeout")

// slowError is errSlow with the error the client gave when the guard's
// Timeout ended its round trip (its cause): its message is errSlow's
// whatever the client's options, and errors.Is finds both.
type slowError struct{ cause error }

func (e *slowError) Error() string        { return errSlow.Error() }
func (e *slowError) Is(target error) bool { return target == errSlow }
func (e *slowError) Unwrap() error        { return e.cause }

// timedOut returns err, the error of a round trip under rctx (the
// guard's Timeout) within ctx (the caller's): ctx's error when ctx ended;
// a slowError wrapping err when rctx's deadline passed and Redis gave no
// reply (a reply error is Redis's answer); err otherwise.
func timedOut(ctx, rctx context.Context, err error) error {
	if err == nil || err == redis.Nil {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	// A client's network deadline may pass a moment before the context's
	// timer ends the context: the clock decides.
	now := time.Now()
	if d, ok := ctx.Deadline(); ok && !now.Before(d) {
		return context.DeadlineExceeded
	}
	var re redis.Error
	d, _ := rctx.Deadline()
	if (errors.Is(rctx.Err(), context.DeadlineExceeded) || !now.Before(d)) && !errors.As(err, &re) {
		return &slowError{err}
	}
	return err
}

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
	// slots is downUntil per slot of a Redis Cluster, for a keyed
	// limiter on a cluster client (nil otherwise): the tenants of the
	// primaries that answer stay on the shared buckets while another
	// primary fails. nDown counts the slots whose downUntil is not 0.
	slots []atomic.Int64
	nDown atomic.Int64
	// reloader is the client, if it can refresh its view of a cluster
	// (a *redis.ClusterClient): after a failed round trip it is asked to,
	// at most once per ProbeInterval (lastReload, UnixNano), so that a
	// failover is seen at the next probe.
	reloader   interface{ ReloadState(context.Context) }
	lastReload atomic.Int64
	// reprobe, if set, is called shortly after a reload: the guard probes
	// Redis at its next decision (or tick) instead of a ProbeInterval
	// later, on the view the reload brought. stop ends the wait for it.
	reprobe func()
	stop    <-chan struct{}
	wg      sync.WaitGroup // round trips and reloads still running
	// closed is set by the guard's Close: Redis is asked nothing more,
	// and every decision is local. bgMu orders background's starts with
	// close's: no background work starts once closed is set.
	closed atomic.Bool
	bgMu   sync.Mutex
}

// background runs f in a goroutine of its own that the guard's Close
// waits for, unless the guard is closed.
func (r *remote) background(f func()) {
	r.bgMu.Lock()
	defer r.bgMu.Unlock()
	if r.closed.Load() {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
}

// close sets closed, and reports whether it was not set before; work that
// background starts after it does not run.
func (r *remote) close() bool {
	r.bgMu.Lock()
	defer r.bgMu.Unlock()
	return !r.closed.Swap(true)
}

// noSlot is the slot of a guard whose health is one for all its keys.
const noSlot = -1

type result struct {
	v   any
	err error
}

var resultPool = sync.Pool{New: func() any { return make(chan result, 1) }}

// newRemote returns the remote of rdb.
func newRemote(rdb redis.UniversalClient, timeout, probe time.Duration) remote {
	reloader, _ := rdb.(interface{ ReloadState(context.Context) })
	return remote{rdb: rdb, timeout: timeout, probe: probe, inline: honoursDeadlines(rdb), reloader: reloader}
}

// perSlot makes r track health per slot of a Redis Cluster, if rdb is a
// cluster client.
func (r *remote) perSlot() {
	if _, ok := r.rdb.(*redis.ClusterClient); ok {
		r.slots = make([]atomic.Int64, clusterSlots)
	}
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
// until the client gives it up. run returns ctx.Err() when ctx ended first,
// an error matching errSlow (with the client's error, if any, wrapped)
// when the bound passed, whatever the client's ContextTimeoutEnabled, and
// the client's error otherwise.
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
		err = timedOut(ctx, rctx, err)
		cancel()
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
		return res.v, timedOut(ctx, rctx, res.err)
	case <-rctx.Done():
		select {
		case res := <-ch: // sent before the goroutine's cancel ended rctx
			resultPool.Put(ch)
			return res.v, timedOut(ctx, rctx, res.err)
		default:
		}
		// The goroutine will still send on ch: the channel is not reused.
		return nil, timedOut(ctx, rctx, rctx.Err())
	}
}

// usable reports whether a decision at now (UnixNano) on slot (noSlot
// for a guard of one key) may ask Redis: Redis has answered last time, or
// ProbeInterval has passed since it did not and this caller won the
// probe.
func (r *remote) usable(now int64, slot int) bool {
	if r.closed.Load() {
		return false
	}
	c := r.cell(slot)
	d := c.Load()
	return d == 0 || now >= d && c.CompareAndSwap(d, now+int64(r.probe))
}

// cell is the health of slot.
func (r *remote) cell(slot int) *atomic.Int64 {
	if r.slots != nil && slot >= 0 {
		return &r.slots[slot]
	}
	return &r.downUntil
}

// failed records a failed round trip at now on slot: its decisions go
// local for ProbeInterval.
func (r *remote) failed(now int64, slot int) {
	if r.cell(slot).Swap(now+int64(r.probe)) == 0 && r.slots != nil && slot >= 0 {
		r.nDown.Add(1)
	}
}

// answered records a round trip on slot that Redis answered.
func (r *remote) answered(slot int) {
	c := r.cell(slot)
	if c.Load() != 0 && c.Swap(0) != 0 && r.slots != nil && slot >= 0 {
		r.nDown.Add(-1)
	}
}

// down reports whether some decisions are local now: Redis (or, per
// slot, a primary of a cluster) did not answer the last round trip.
func (r *remote) down() bool {
	return r.downUntil.Load() != 0 || r.nDown.Load() > 0 || r.closed.Load()
}

// reload asks the client to refresh its view of the cluster, in the
// background, if it can and has not been asked within ProbeInterval: a
// round trip failed at now, perhaps because a primary it knew is gone.
func (r *remote) reload(now int64) {
	if r.reloader == nil {
		return
	}
	last := r.lastReload.Load()
	if last != 0 && now-last < int64(r.probe) || !r.lastReload.CompareAndSwap(last, now) {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), r.probe)
		defer cancel()
		r.reloader.ReloadState(ctx) // a *redis.ClusterClient reloads in the background
		t := time.NewTimer(min(reloadSettle, r.probe/2))
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.stop:
			return
		}
		if r.reprobe != nil {
			r.reprobe()
		} else {
			r.probeNow()
		}
	}()
}

// reloadSettle is how long after asking a cluster client to reload its
// view a guard probes Redis again: the reload is one CLUSTER SLOTS.
const reloadSettle = 100 * time.Millisecond

// probeNow lets the next decision of every slot that is down try Redis.
func (r *remote) probeNow() {
	now := time.Now().UnixNano()
	lower := func(c *atomic.Int64) {
		if d := c.Load(); d > now {
			c.CompareAndSwap(d, now)
		}
	}
	lower(&r.downUntil)
	if r.slots != nil && r.nDown.Load() > 0 {
		for i := range r.slots {
			lower(&r.slots[i])
		}
	}
}

// clusterSlots is the number of slots of a Redis Cluster.
const clusterSlots = 16384

// keySlot returns the slot of key in a Redis Cluster: CRC16 (XMODEM) of
// its hash tag (the part between the first "{" and the next "}", if not
// empty) or of the whole key, modulo 16384.
func keySlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % clusterSlots
}
