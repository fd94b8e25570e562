package resilienceredis

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/telemetry"
	"github.com/redis/go-redis/v9"
)

// CacheStoreFailed is the event of a [CacheStore] round trip that failed
// or was not answered within the store's Timeout (Name the store's name,
// Key the cache key, Err why), and of a stored value it could not read
// (Err matching [ErrBadEntry]), or of a reply of the store's script it
// cannot read. The call it served went on: a failed Get is a miss, a
// failed Set or Delete is dropped. The end of the caller's own context is
// not reported.
const CacheStoreFailed telemetry.Type = "cache.store_failed"

// ErrBadEntry matches the error of a [CacheStoreFailed] event for a value
// at a cache key that the store cannot have written (not its envelope, or
// a value the Codec cannot read): the store treats it as no entry and
// deletes it.
var ErrBadEntry = errors.New("resilienceredis: cache entry unreadable")

// Codec turns values of type T into bytes and back, for a [CacheStore].
// Unmarshal(Marshal(v)) must give a value equal to v (policy/cache's
// Store contract). Both must be safe for simultaneous use.
type Codec[T any] interface {
	Marshal(v T) ([]byte, error)
	Unmarshal(b []byte) (T, error)
}

// JSONCodec returns a Codec of encoding/json: Marshal is json.Marshal,
// Unmarshal json.Unmarshal into a new T. Unexported fields and other
// values JSON does not keep are lost.
func JSONCodec[T any]() Codec[T] { return jsonCodec[T]{} }

type jsonCodec[T any] struct{}

func (jsonCodec[T]) Marshal(v T) ([]byte, error) { return json.Marshal(v) }
func (jsonCodec[T]) Unmarshal(b []byte) (T, error) {
	var v T
	err := json.Unmarshal(b, &v)
	return v, err
}

// StoredError is the error of a negative entry read from a [CacheStore]:
// the store keeps the error's text only, so errors.Is and errors.As
// against the error the load returned (a sentinel, a type) do not match
// it. Error returns "resilienceredis: cached error: " and the text.
type StoredError struct {
	// Msg is the Error() text of the error that was stored.
	Msg string
}

func (e *StoredError) Error() string { return "resilienceredis: cached error: " + e.Msg }

// CacheStoreOption configures a [CacheStore] in [NewCacheStore]. Options
// apply in order; when two set the same field, the last one wins.
type CacheStoreOption interface{ applyCache(*cacheStoreConfig) }

type cacheStoreConfig struct {
	prefix   string
	timeout  time.Duration
	observer telemetry.Observer
}

type cacheOption func(*cacheStoreConfig)

func (o cacheOption) applyCache(c *cacheStoreConfig) { o(c) }

// WithCachePrefix sets what every Redis key of a [CacheStore] starts with.
// It must not hold '{' or '}'. "" (the default) means "resilience:".
func WithCachePrefix(p string) CacheStoreOption {
	return cacheOption(func(c *cacheStoreConfig) { c.prefix = p })
}

// WithCacheTimeout sets the longest a [CacheStore]'s Get, Set, Delete or
// Purge waits on Redis: > 0; 0 means 50ms.
func WithCacheTimeout(d time.Duration) CacheStoreOption {
	return cacheOption(func(c *cacheStoreConfig) { c.timeout = d })
}

// WithCacheObserver sets where a [CacheStore] reports its failures
// ([CacheStoreFailed]); nil (the default): nowhere.
func WithCacheObserver(o telemetry.Observer) CacheStoreOption {
	return cacheOption(func(c *cacheStoreConfig) { c.observer = o })
}

// CacheStore is a policy/cache Store[T] on Redis: caches of the same name
// and prefix, in one process or across a fleet, given it with
// cache.WithStore, share their entries. It is safe for simultaneous use
// by multiple goroutines. Create one with [NewCacheStore]: the zero
// CacheStore is not usable (its methods panic naming NewCacheStore).
//
// An entry is kept at Prefix+"cache:{name}:"+generation+":"+key, as an
// envelope of its Expires, Discard and Size and its value as the Codec
// wrote it, with a Redis expiry at its Discard time (PXAT, rounded up to
// the next whole millisecond): Redis forgets it then. Purge increments the generation,
// kept at Prefix+"cache:{name}:gen" (without expiry): the entries of the
// older generations are no longer read, and expire by their own TTLs.
// Each operation is one script (one round trip) that reads the
// generation and builds the entry's key from it: the hash tag keeps those
// keys in the slot of the keys the script declares, in a Redis Cluster.
//
// Times are the wall clock's: Discard is given to Redis as an instant
// (PXAT), so a Redis server whose clock runs ahead forgets entries early
// (a miss), one behind keeps them longer (the cache still never returns a
// value past its Discard). A Set of an entry whose Discard is not after
// time.Now() removes the key's entry instead: a cache on a clock.Fake
// whose times lie in the wall clock's past stores nothing through it.
//
// Negative entries (cache.WithNegativeTTL) are stored as their error's text:
// a Get returns a *[StoredError], so errors.Is against the load's own
// error does not hold for an entry read back from the store.
//
// No operation waits on Redis longer than Timeout (as the limiter's round
// trips, see the package documentation). A Get that fails, times out or
// finds a value it cannot read (which it deletes) is a miss; a Set or
// Delete that fails is dropped; a Purge that fails leaves the entries.
// Each such failure is reported as a [CacheStoreFailed] event.
type CacheStore[T any] struct {
	name  string
	codec Codec[T]
	base  string // Prefix + "cache:{name}:"
	gen   string // base + "gen"
	obs   telemetry.Observer
	r     remote
}

var _ cache.Store[int] = (*CacheStore[int])(nil)

// NewCacheStore returns the store of the caches named name on rdb, its
// values written by codec (nil: [JSONCodec]). It panics if rdb is nil (or
// a nil pointer, such as a nil *redis.Client), if name is empty, not valid
// UTF-8 or holds '{' or '}', if an option is nil, if the prefix holds '{'
// or '}', or if the timeout is negative, with a message naming the
// constructor or the option and the value.
func NewCacheStore[T any](rdb redis.UniversalClient, name string, codec Codec[T], opts ...CacheStoreOption) *CacheStore[T] {
	checkClient("NewCacheStore", rdb)
	checkName("NewCacheStore", name)
	var c cacheStoreConfig
	for i, o := range opts {
		checkOption("NewCacheStore", i, o == nil)
		o.applyCache(&c)
	}
	switch {
	case strings.ContainsAny(c.prefix, "{}"):
		panic(fmt.Sprintf("resilienceredis: WithCachePrefix(%q): prefix must not hold '{' or '}'", c.prefix))
	case c.timeout < 0:
		panic(fmt.Sprintf("resilienceredis: WithCacheTimeout(%v): timeout must be > 0 (0: 50ms)", c.timeout))
	}
	if c.prefix == "" {
		c.prefix = defaultPrefix
	}
	if c.timeout == 0 {
		c.timeout = defaultTimeout
	}
	if codec == nil {
		codec = JSONCodec[T]()
	}
	base := c.prefix + "cache:{" + name + "}:"
	return &CacheStore[T]{name: name, codec: codec, base: base, gen: base + "gen", obs: c.observer,
		r: newRemote(rdb, c.timeout, defaultProbe)}
}

// The scripts read the generation and act on the entry key of it. KEYS[1]
// is the generation's key, KEYS[2] the entry keys' base (same slot).
var (
	cacheGetScript = redis.NewScript(`
local g = redis.call('GET', KEYS[1]) or '0'
return {g, redis.call('GET', KEYS[2] .. g .. ':' .. ARGV[1])}`)
	cacheSetScript = redis.NewScript(`
local g = redis.call('GET', KEYS[1]) or '0'
redis.call('SET', KEYS[2] .. g .. ':' .. ARGV[1], ARGV[2], 'PXAT', ARGV[3])
return 1`)
	cacheDelScript = redis.NewScript(`
local g = redis.call('GET', KEYS[1]) or '0'
return redis.call('DEL', KEYS[2] .. g .. ':' .. ARGV[1])`)
	cachePurgeScript = redis.NewScript(`return redis.call('INCR', KEYS[1])`)
	cacheDelIfScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)
)

// Name returns the store's name.
func (s *CacheStore[T]) Name() string {
	if s.base == "" {
		zeroValue("CacheStore", "Name", "NewCacheStore")
	}
	return s.name
}

// Get returns the entry of key, or false if there is none, it could not
// be read, or Redis failed or did not answer within Timeout.
func (s *CacheStore[T]) Get(ctx context.Context, key string) (cache.Entry[T], bool) {
	if s.base == "" {
		zeroValue("CacheStore", "Get", "NewCacheStore")
	}
	var zero cache.Entry[T]
	v, err := s.r.run(ctx, cacheGetScript, []string{s.gen, s.base}, []any{key})
	if err != nil {
		s.report(ctx, key, err)
		return zero, false
	}
	a, ok := v.([]any)
	if !ok || len(a) < 1 {
		s.report(ctx, key, fmt.Errorf("%w: reply %v", ErrBadEntry, v))
		return zero, false
	}
	if len(a) < 2 || a[1] == nil {
		return zero, false
	}
	g, _ := a[0].(string)
	raw, _ := a[1].(string)
	e, err := s.decode([]byte(raw))
	if err != nil {
		s.report(ctx, key, err)
		// Delete that value only: not a newer one set since.
		k := s.base + g + ":" + key
		if _, derr := s.r.run(context.WithoutCancel(ctx), cacheDelIfScript, []string{k}, []any{raw}); derr != nil {
			s.report(ctx, key, derr)
		}
		return zero, false
	}
	return e, true
}

// Set stores e under key until e.Discard, in place of any entry of key; an
// entry already past its Discard time, or whose value the Codec cannot
// write (reported), removes the key's entry instead.
func (s *CacheStore[T]) Set(ctx context.Context, key string, e cache.Entry[T]) {
	if s.base == "" {
		zeroValue("CacheStore", "Set", "NewCacheStore")
	}
	if !e.Discard.After(time.Now()) {
		s.Delete(ctx, key)
		return
	}
	b, err := s.encode(e)
	if err != nil {
		s.report(ctx, key, err)
		s.Delete(ctx, key) // the older entry must not outlive the newer value
		return
	}
	_, err = s.r.run(ctx, cacheSetScript, []string{s.gen, s.base}, []any{key, b, pxatMillis(e.Discard)})
	if err != nil {
		s.report(ctx, key, err)
	}
}

// Delete removes the entry of key, if any.
func (s *CacheStore[T]) Delete(ctx context.Context, key string) {
	if s.base == "" {
		zeroValue("CacheStore", "Delete", "NewCacheStore")
	}
	if _, err := s.r.run(ctx, cacheDelScript, []string{s.gen, s.base}, []any{key}); err != nil {
		s.report(ctx, key, err)
	}
}

// Purge makes every entry stored so far invisible, by one INCR of the
// generation; the older entries expire at their Discard times.
func (s *CacheStore[T]) Purge(ctx context.Context) {
	if s.base == "" {
		zeroValue("CacheStore", "Purge", "NewCacheStore")
	}
	if _, err := s.r.run(ctx, cachePurgeScript, []string{s.gen}, nil); err != nil {
		s.report(ctx, "", err)
	}
}

// report gives a failure to the observer, unless it is the caller's own
// context that ended.
func (s *CacheStore[T]) report(ctx context.Context, key string, err error) {
	if s.obs == nil || ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return
	}
	s.obs.Observe(telemetry.Event{Type: CacheStoreFailed, Name: s.name, Key: key, Err: err})
}

func pxatMillis(t time.Time) int64 {
	ns := t.UnixNano()
	ms := ns / 1e6
	if ns%1e6 > 0 {
		ms++
	}
	return ms
}

// The envelope: version 1, kind (0 a value, 1 an error's text), Expires
// and Discard (UnixNano, math.MinInt64 for the zero time), Size, each
// 8 bytes big-endian, then the Codec's bytes or the error's text.
const (
	envVersion = 1
	envHeader  = 2 + 3*8
)

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return math.MinInt64
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == math.MinInt64 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func (s *CacheStore[T]) encode(e cache.Entry[T]) ([]byte, error) {
	var body []byte
	kind := byte(0)
	if e.Err != nil {
		kind, body = 1, []byte(e.Err.Error())
	} else {
		var err error
		if body, err = s.codec.Marshal(e.Value); err != nil {
			return nil, fmt.Errorf("resilienceredis: cache %s: marshal: %w", s.name, err)
		}
	}
	b := make([]byte, envHeader, envHeader+len(body))
	b[0], b[1] = envVersion, kind
	binary.BigEndian.PutUint64(b[2:], uint64(unixNano(e.Expires)))
	binary.BigEndian.PutUint64(b[10:], uint64(unixNano(e.Discard)))
	binary.BigEndian.PutUint64(b[18:], uint64(e.Size))
	return append(b, body...), nil
}

func (s *CacheStore[T]) decode(b []byte) (cache.Entry[T], error) {
	var e cache.Entry[T]
	if len(b) < envHeader || b[0] != envVersion || b[1] > 1 {
		return e, fmt.Errorf("%w: not an envelope (%d bytes)", ErrBadEntry, len(b))
	}
	e.Expires = fromUnixNano(int64(binary.BigEndian.Uint64(b[2:])))
	e.Discard = fromUnixNano(int64(binary.BigEndian.Uint64(b[10:])))
	e.Size = int64(binary.BigEndian.Uint64(b[18:]))
	if e.Discard.Before(e.Expires) || e.Size < 0 {
		return cache.Entry[T]{}, fmt.Errorf("%w: times or size out of order", ErrBadEntry)
	}
	body := b[envHeader:]
	if b[1] == 1 {
		e.Err = &StoredError{Msg: string(body)}
		return e, nil
	}
	v, err := s.codec.Unmarshal(body)
	if err != nil {
		return cache.Entry[T]{}, fmt.Errorf("%w: %w", ErrBadEntry, err)
	}
	e.Value = v
	return e, nil
}
