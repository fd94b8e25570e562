package resilienceredis

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// No call waits on Redis longer than its bound (the store's Timeout, or
// the caller's deadline if that comes first), whatever the client: here
// round trips that block, ignoring their context, until the test ends,
// on a *redis.Client without ContextTimeoutEnabled and on a *redis.Ring
// (a client the package does not know to bound its waits by the
// context's deadline). Each Get must return, a miss, while its round trip
// is still blocked; 2s is a bound for failure only.
func TestRemoteBoundWhateverTheClient(t *testing.T) {
	addr := redistest.Addr(t)
	clients := map[string]func(t *testing.T) redis.UniversalClient{
		"Client": func(t *testing.T) redis.UniversalClient { return clientWith(t, addr, false) },
		"Ring": func(t *testing.T) redis.UniversalClient {
			r := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": addr}, MaxRetries: -1,
				DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second, PoolTimeout: time.Second})
			t.Cleanup(func() { r.Close() })
			return r
		},
	}
	for name, client := range clients {
		for _, callerFirst := range []bool{true, false} {
			t.Run(name+map[bool]string{true: "/caller's deadline first", false: "/Timeout first"}[callerFirst], func(t *testing.T) {
				release := make(chan struct{})
				around := func(context.Context, func() error) error { <-release; return errClient }
				rdb := client(t)
				rdb.AddHook(aroundHook{&around})
				timeout, wait := time.Minute, 100*time.Millisecond
				if !callerFirst {
					timeout, wait = wait, time.Minute
				}
				s := NewCacheStore[user](rdb, "users", nil, WithCachePrefix(testPrefix(t)), WithCacheTimeout(timeout))
				ctx, cancel := context.WithTimeout(ctxFor(t), wait)
				defer cancel()
				done := make(chan bool, 1)
				go func() { _, ok := s.Get(ctx, "u1"); done <- ok }()
				select {
				case ok := <-done:
					if ok {
						t.Error("Get found an entry; want a miss")
					}
					close(release)
				case <-time.After(2 * time.Second):
					close(release)
					<-done
					t.Errorf("Get waited on a blocked round trip past its bound (%v)", min(timeout, wait))
				}
			})
		}
	}
}
