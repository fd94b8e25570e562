package cache

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/internal/testwait"
)

// A fresh hit takes no lock: it is answered while its shard's lock is held
// by someone else.
func TestFreshHitTakesNoLock(t *testing.T) {
	c := New[string](time.Minute)
	get := Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) { return "v" + k, nil })
	if v, _ := get(context.Background(), "k"); v != "vk" {
		t.Fatalf("got %q, want vk", v)
	}
	sh, _ := c.shard("k")
	sh.mu.Lock()
	defer sh.mu.Unlock()
	ctx, info := WithInfo(context.Background())
	done := make(chan string, 1)
	go func() { v, _ := get(ctx, "k"); done <- v }()
	v := testwait.RecvFor(t, done, 5*time.Second, "a fresh hit with its shard locked")
	if v != "vk" || info.Outcome != Hit {
		t.Fatalf("got %q, %v; want a hit of vk", v, info.Outcome)
	}
}
