package cache

import (
	"context"
	"time"
)

type keyCtxKey struct{}

type infoCtxKey struct{}

// Key returns a copy of ctx that carries key, the key of a call through
// [Cache.Policy] without [WithKey]. An empty key bypasses the cache.
func Key(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, keyCtxKey{}, key)
}

// KeyOf returns the key that [Key] set in ctx, "" if none.
func KeyOf(ctx context.Context) string {
	k, _ := ctx.Value(keyCtxKey{}).(string)
	return k
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
// in it how it was answered. It costs the caller two allocations; a call
// without one pays one context lookup.
func WithInfo(ctx context.Context) (context.Context, *Info) {
	info := new(Info)
	return context.WithValue(ctx, infoCtxKey{}, info), info
}

// WasStale reports whether the last call under ctx returned a stale value:
// ctx must carry an Info from [WithInfo]; false if it carries none.
func WasStale(ctx context.Context) bool {
	info, _ := ctx.Value(infoCtxKey{}).(*Info)
	return info != nil && info.Stale
}

func infoOf(ctx context.Context) *Info {
	info, _ := ctx.Value(infoCtxKey{}).(*Info)
	return info
}
