package resilienceredis

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"go.uber.org/goleak"
)

// ownCtx is a caller's context of a type of its own: the context package
// watches it, for each context derived from it with a timeout, in a
// goroutine that ends only when the derived context does.
type ownCtx struct {
	context.Context
	done chan struct{}
}

func (c ownCtx) Done() <-chan struct{} { return c.done }

// A round trip that Redis answered leaves nothing running once the call
// returns, on either kind of client: the context that bounds it by the
// Timeout ends with it (here a Timeout of a minute, and a caller's
// context of a type of its own, which the context package would go on
// watching until the Timeout).
func TestRemoteAnsweredLeavesNothingRunning(t *testing.T) {
	for _, inline := range []bool{true, false} {
		t.Run(map[bool]string{true: "ContextTimeoutEnabled", false: "goroutine"}[inline], func(t *testing.T) {
			s := NewCacheStore[user](clientWith(t, redistest.Addr(t), inline), "users", nil,
				WithCachePrefix(testPrefix(t)), WithCacheTimeout(time.Minute))
			ctx := ownCtx{context.Background(), make(chan struct{})}
			s.Get(ctx, "u1") // a connection, and the script loaded
			ignore := goleak.IgnoreCurrent()
			if _, ok := s.Get(ctx, "u1"); ok {
				t.Fatal("Get of a key never set found an entry")
			}
			if err := goleak.Find(ignore); err != nil {
				t.Errorf("after an answered Get: %v", err)
			}
		})
	}
}
