package cache_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/cache"
)

// KeyOf reads the key Key set, "" without one; WithInfo and Key keep each
// other's part of the context.
func TestKeyOfAndInfoInTheContext(t *testing.T) {
	bg := context.Background()
	if got := cache.KeyOf(bg); got != "" {
		t.Fatalf("KeyOf(Background) = %q, want empty", got)
	}
	if cache.WasStale(bg) {
		t.Fatal("WasStale without an Info = true")
	}
	ctx, info := cache.WithInfo(bg)
	if got := cache.KeyOf(ctx); got != "" {
		t.Fatalf("KeyOf of a context with an Info only = %q, want empty", got)
	}
	ctx = cache.Key(ctx, "k")
	if got := cache.KeyOf(ctx); got != "k" {
		t.Fatalf("KeyOf = %q, want k", got)
	}
	info.Stale = true
	if !cache.WasStale(ctx) {
		t.Fatal("Key dropped the Info of its parent")
	}
	ctx2, info2 := cache.WithInfo(ctx)
	if got := cache.KeyOf(ctx2); got != "k" {
		t.Fatalf("WithInfo dropped the key: KeyOf = %q, want k", got)
	}
	if info2 == info || cache.WasStale(ctx2) {
		t.Fatal("WithInfo did not install a new Info")
	}
}

func TestOutcomeString(t *testing.T) {
	got := []string{cache.Bypassed.String(), cache.Hit.String(), cache.Miss.String(), cache.Coalesced.String(), cache.Outcome(9).String()}
	want := []string{"bypassed", "hit", "miss", "coalesced", "unknown"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Outcome.String mismatch (-want +got):\n%s", diff)
	}
}
