package resilienceredis

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// cacheScriptHook stands between a client and Redis for the round trips
// of one script (EVALSHA by its hash, or EVAL of its source): reply, if
// set, replaces Redis's answer; fail, if set, is the round trip's error
// instead of Redis's answer. Other commands and scripts pass.
type cacheScriptHook struct {
	script *redis.Script
	reply  any
	fail   error
}

func (h cacheScriptHook) mine(cmd redis.Cmder) bool {
	args := cmd.Args()
	if len(args) < 2 {
		return false
	}
	s, _ := args[1].(string)
	switch cmd.Name() {
	case "evalsha":
		return s == h.script.Hash()
	case "eval":
		sum := sha1.Sum([]byte(s))
		return hex.EncodeToString(sum[:]) == h.script.Hash()
	}
	return false
}

func (h cacheScriptHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h cacheScriptHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !h.mine(cmd) {
			return next(ctx, cmd)
		}
		if h.fail != nil {
			cmd.SetErr(h.fail)
			return h.fail
		}
		err := next(ctx, cmd)
		if c, ok := cmd.(*redis.Cmd); ok && err == nil && h.reply != nil {
			c.SetVal(h.reply)
		}
		return err
	}
}
func (h cacheScriptHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// Get's script answers [generation, value] (a value false, nil, when the
// key has none): a reply of another shape (a proxy that mangles replies)
// is a miss reported as a CacheStoreFailed event of the key; an answer
// cut at the missing value ([generation]) is a miss like [generation,
// nil], and neither is a failure.
func TestCacheStoreGetReplyShapes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  any
		report bool
	}{
		{"not an array", int64(1), true},
		{"empty array", []any{}, true},
		{"generation only", []any{"0"}, false},
		{"generation and nil", []any{"0", nil}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxFor(t)
			rdb := newClient(t)
			rdb.AddHook(cacheScriptHook{script: cacheGetScript, reply: tc.reply})
			ev := &events{}
			s := NewCacheStore[user](rdb, "users", nil, WithCachePrefix(testPrefix(t)),
				WithCacheTimeout(10*time.Second), WithCacheObserver(ev))
			s.Set(ctx, "k", entryAt(user{"Ada", 36}, time.Minute, time.Minute))
			if e, ok := s.Get(ctx, "k"); ok {
				t.Errorf("Get with the reply %#v = %+v, true; want a miss", tc.reply, e)
			}
			got := ev.list()
			if !tc.report {
				if len(got) != 0 {
					t.Errorf("events %v; want none: a missing value is no failure", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("events %v; want one %s", got, CacheStoreFailed)
			}
			if e := got[0]; e.Type != CacheStoreFailed || e.Name != "users" || e.Key != "k" || e.Err == nil {
				t.Errorf("event %+v; want %s of users, key k, with an error", e, CacheStoreFailed)
			}
		})
	}
}

// A Get of a key that has no entry, on a Redis that answers, is a miss
// and no failure: no CacheStoreFailed event, and nothing is deleted.
func TestCacheStoreMissIsQuiet(t *testing.T) {
	ctx := ctxFor(t)
	ev := &events{}
	s := newUserStore(t, testPrefix(t), WithCacheTimeout(10*time.Second), WithCacheObserver(ev))
	for i := range 3 {
		if e, ok := s.Get(ctx, fmt.Sprint("absent", i)); ok {
			t.Errorf("Get of a key never set = %+v, true; want a miss", e)
		}
	}
	if got := ev.list(); len(got) != 0 {
		t.Errorf("events %v; want none", got)
	}
}
