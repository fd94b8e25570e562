package breaker

import (
	"math"
	"sync"
	"testing"

	"github.com/f0b5b96b/resilience/clock"
)

func TestShardCountFoldsBeforeOverflow(t *testing.T) {
	b := New(WithClock(clock.NewFake()), WithThreshold(1))
	gen := wordGen(b.word.Load())
	for i := range b.shards {
		b.shards[i].n[kSuccesses].Store(tag(gen) | (countMask - 1))
	}
	for range 3 {
		b.Record(false)
	}
	// Every shard holds 2³²-2; one of them took three more.
	want := uint64(len(b.shards))*(countMask-1) + 3
	if got := b.Counts().Successes; got != want {
		t.Fatalf("Successes = %d, want %d", got, want)
	}
	lockWithin(t, &b.mu, "the breaker's mutex")
	carry := b.carry[kSuccesses]
	b.mu.Unlock()
	if carry != countMask {
		t.Fatalf("carry = %d, want one fold of %d", carry, uint64(countMask))
	}
	b.Reset()
	if got := b.Counts().Successes; got != 0 {
		t.Fatalf("Successes after Reset = %d, want 0", got)
	}
}

func TestShardWordsOfOtherGenerationsDoNotCount(t *testing.T) {
	b := New(WithClock(clock.NewFake()))
	gen := wordGen(b.word.Load())
	b.shards[0].n[kSuccesses].Store(tag(gen+1) | 5) // a later generation's
	b.shards[1].n[kSuccesses].Store(tag(gen-1) | 7) // an earlier one's
	if got := b.Counts().Successes; got != 0 {
		t.Fatalf("Successes = %d, want 0", got)
	}
	// A stale add neither counts nor overwrites the current generation's
	// count, wherever it lands.
	for i := range b.shards {
		b.shards[i].n[kSuccesses].Store(tag(gen) | 5)
	}
	b.add(kSuccesses, gen-1, false)
	b.add(kSuccesses, gen+1, false)
	if got, want := b.Counts().Successes, 5*uint64(len(b.shards)); got != want {
		t.Fatalf("Successes after stale adds = %d, want %d", got, want)
	}
}

func TestStreakSaturates(t *testing.T) {
	b := New(WithClock(clock.NewFake()), WithThreshold(1))
	b.ForceClosed()
	lockWithin(t, &b.mu, "the breaker's mutex")
	b.streak = math.MaxUint64 - 1
	b.mu.Unlock()
	b.Record(true)
	b.Record(true)
	if got := b.Counts().ConsecutiveFailures; got != math.MaxUint64 {
		t.Fatalf("ConsecutiveFailures = %d, want %d", got, uint64(math.MaxUint64))
	}
	b.Record(false)
	if got := b.Counts().ConsecutiveFailures; got != 0 {
		t.Fatalf("ConsecutiveFailures after a success = %d, want 0", got)
	}
}

func TestShardsSpreadGoroutines(t *testing.T) {
	b := New()
	seen := map[*shard]bool{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			s := b.shardFor()
			if s != b.shardFor() {
				t.Error("one goroutine picked two shards")
			}
			mu.Lock()
			seen[s] = true
			mu.Unlock()
		})
	}
	waitWithin(t, &wg, "64 goroutines picking a shard")
	if len(seen) < len(b.shards)/2 {
		t.Fatalf("64 goroutines used %d of %d shards", len(seen), len(b.shards))
	}
}
