package cache

import (
	"context"
	"time"
)

type callCtxKey struct{}

// call is what [Key] and [WithInfo] put in a context, under one context
// key, so that a call through a Policy finds both in one lookup: each
// copies the other's field from the call it finds in its parent.
type call struct {
	key  string
	info *Info
}

func callOf(ctx context.Context) *call {
	cv, _ := ctx.Value(callCtxKey{}).(*call)
	return cv
}

// Key returns a copy of ctx that carries key, the key of a call through
// [Cache.Policy] without [WithKey], and the Info of ctx, if any. An empty
// key bypasses the cache. It costs two allocations and one context
// lookup.
func Key(ctx context.Context, key string) context.Context {
	cv := &call{key: key}
	if p := callOf(ctx); p != nil {
		cv.info = p.info
	}
	return context.WithValue(ctx, callCtxKey{}, cv)
}

// KeyOf returns the key that [Key] set in ctx, "" if none.
func KeyOf(ctx context.Context) string {
	if cv := callOf(ctx); cv != nil {
		return cv.key
	}
	return ""
}

// Info says how a cache answered one call. A caller that wants to know
// installs one with [WithInfo] before the call and reads it after the
// call returns; the cache writes it before it returns. One Info is for
// one call at a time: give each call (each goroutine) its own.
type Info struct {
	// Outcome is how the call was answered.
	Outcome Outcome
	// Stale is true when the value returned is past its TTL: served by
	// StaleWhileRevalidate, or by StaleIfError in place of a failed load.
	Stale bool
	// Age is how long past its TTL a stale value is; 0 if not stale.
	Age time.Duration
	// Err is the error of the failed load that a stale value replaced
	// (StaleIfError); nil otherwise. The call itself returns a nil error.
	Err error
}

// Outcome is how a cache answered a call.
type Outcome uint8

// The outcomes of a call, in [Info.Outcome].
const (
	// Bypassed: the key was empty; the call went straight through.
	Bypassed Outcome = iota
	// Hit: a stored value (or cached error) was returned, fresh or, with
	// StaleWhileRevalidate, stale.
	Hit
	// Miss: the call started a load and waited for it.
	Miss
	// Coalesced: the call waited for a load another call had started.
	Coalesced
)

// String returns "bypassed", "hit", "miss" or "coalesced".
func (o Outcome) String() string {
	switch o {
	case Bypassed:
		return "bypassed"
	case Hit:
		return "hit"
	case Miss:
		return "miss"
	case Coalesced:
		return "coalesced"
	}
	return "unknown"
}

// WithInfo returns a copy of ctx that carries a new Info, and the Info: a
// call under that context through a cache (its Policy or a Guard) records
// in it how it was answered. ctx's key ([Key]), if any, stays. It costs
// two allocations and one context lookup; a call through a cache finds
// the Info in the lookup that finds its key.
func WithInfo(ctx context.Context) (context.Context, *Info) {
	ci := new(struct {
		call
		own Info
	})
	ci.info = &ci.own
	if p := callOf(ctx); p != nil {
		ci.key = p.key
	}
	return context.WithValue(ctx, callCtxKey{}, &ci.call), &ci.own
}

// WasStale reports whether the last call under ctx returned a stale value:
// ctx must carry an Info from [WithInfo]; false if it carries none.
func WasStale(ctx context.Context) bool {
	info := infoOf(ctx)
	return info != nil && info.Stale
}

func infoOf(ctx context.Context) *Info {
	if cv := callOf(ctx); cv != nil {
		return cv.info
	}
	return nil
}
