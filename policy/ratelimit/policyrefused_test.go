package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/telemetry"
)

// hintObserver keeps the Wait of each ratelimit.refused event.
type hintObserver struct{ waits []time.Duration }

func (o *hintObserver) Observe(e telemetry.Event) {
	if e.Type == ratelimit.EventRefused {
		o.waits = append(o.waits, e.Wait)
	}
}

// A call that Policy or KeyedPolicy refuses is counted and reported as
// the limiter's other refusals are: in Stats().Refused, in the Snapshot
// (and a Keyed's top keys), and as a ratelimit.refused event carrying the
// refusal's Retry-After.
func TestPolicyRefusalIsCountedAndReported(t *testing.T) {
	ctx := context.Background()
	op := func(context.Context) (int, error) { return 1, nil }
	fake := clock.NewFake()

	var obs hintObserver
	l := ratelimit.New(1, 1, ratelimit.WithName("api"), ratelimit.WithClock(fake), ratelimit.WithObserver(&obs))
	p := ratelimit.Policy[int](l)
	if _, err := p.Do(ctx, op); err != nil {
		t.Fatalf("first call: %v", err)
	}
	_, err := p.Do(ctx, op)
	hint, ok := resilience.RetryAfter(err)
	if !errors.Is(err, ratelimit.ErrLimited) || !ok || hint != time.Second {
		t.Fatalf("second call: err = %v (Retry-After %v, %v), want ErrLimited with 1s", err, hint, ok)
	}
	if got := l.Stats().Refused; got != 1 {
		t.Errorf("Stats().Refused = %d, want 1", got)
	}
	if got := l.Snapshot().Refused; got != 1 {
		t.Errorf("Snapshot().Refused = %d, want 1", got)
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, obs.waits); diff != "" {
		t.Errorf("refused events' Wait mismatch (-want +got):\n%s", diff)
	}

	var kobs hintObserver
	k := ratelimit.NewKeyed[string](1, 1, ratelimit.WithName("tenants"), ratelimit.WithClock(fake), ratelimit.WithObserver(&kobs))
	kp := ratelimit.KeyedPolicy[int](k, func(context.Context) string { return "t1" })
	if _, err := kp.Do(ctx, op); err != nil {
		t.Fatalf("keyed first call: %v", err)
	}
	if _, err := kp.Do(ctx, op); !errors.Is(err, ratelimit.ErrLimited) {
		t.Fatalf("keyed second call: err = %v, want ErrLimited", err)
	}
	s := k.Snapshot()
	if s.Refused != 1 {
		t.Errorf("Keyed Snapshot().Refused = %d, want 1", s.Refused)
	}
	if diff := cmp.Diff([]telemetry.KeyStat{{Key: "t1", Refused: 1}}, s.Keys.Top); diff != "" {
		t.Errorf("Keyed top keys mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{time.Second}, kobs.waits); diff != "" {
		t.Errorf("keyed refused events' Wait mismatch (-want +got):\n%s", diff)
	}
}

// Of keys tied for Top's last place, the most recently used are kept.
func TestKeyedTopTiesKeepTheMostRecentlyUsed(t *testing.T) {
	k := ratelimit.NewKeyed[string](1, 1, ratelimit.WithClock(clock.NewFake()))
	for _, key := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		k.Allow(key)
		k.Allow(key) // refused: one refusal each
	}
	var got []string
	for _, s := range k.Snapshot().Keys.Top {
		got = append(got, s.Key)
	}
	if diff := cmp.Diff([]string{"c", "d", "e", "f", "g"}, got); diff != "" {
		t.Errorf("Top keys mismatch (-want +got):\n%s", diff)
	}
}

// Of keys tied for Top's last place, the most recently used are kept also
// when a key with more refusals, used before them all, takes a place.
func TestKeyedTopTiesKeepTheMostRecentlyUsedAfterAHigherKey(t *testing.T) {
	k := ratelimit.NewKeyed[string](1, 1, ratelimit.WithClock(clock.NewFake()))
	for range 3 {
		k.Allow("f") // two refusals, the least recently used key
	}
	for _, key := range []string{"a", "b", "c", "d", "e"} {
		k.Allow(key)
		k.Allow(key) // refused: one refusal each
	}
	var got []string
	for _, s := range k.Snapshot().Keys.Top {
		got = append(got, s.Key)
	}
	if diff := cmp.Diff([]string{"f", "b", "c", "d", "e"}, got); diff != "" {
		t.Errorf("Top keys mismatch (-want +got):\n%s", diff)
	}
}
