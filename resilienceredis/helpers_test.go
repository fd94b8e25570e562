package resilienceredis

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// newClient returns a client of the package's server, closed when t ends.
func newClient(t testing.TB) *redis.Client {
	return clientOf(t, redistest.Addr(t))
}

// clientOf returns a client of the server at addr, closed when t ends. Its
// own timeouts are short and it does not retry, so that round trips a
// stalled server left behind end soon after the test.
func clientOf(t testing.TB, addr string) *redis.Client {
	return clientWith(t, addr, false)
}

// clientWith is clientOf with ContextTimeoutEnabled set to ctxTimeouts: a
// client that bounds its waits by the context's deadline, which the guards
// then call on the caller's goroutine.
func clientWith(t testing.TB, addr string, ctxTimeouts bool) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr: addr, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		PoolTimeout: time.Second, ContextTimeoutEnabled: ctxTimeouts,
	})
	t.Cleanup(func() { c.Close() })
	return c
}

var unique atomic.Int64

// testPrefix returns a key prefix no other test (nor an earlier run on a
// long-lived server) uses.
func testPrefix(t testing.TB) string {
	name := strings.NewReplacer("/", ".", " ", "_", "{", "(", "}", ")").Replace(t.Name())
	return "test:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":" + strconv.FormatInt(unique.Add(1), 10) + ":" + name + ":"
}

// ctxFor returns a context that ends when t does or after 30s.
func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}
