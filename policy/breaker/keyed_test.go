package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// trip opens b with threshold-1 breakers: one recorded failure.
func trip(b *breaker.Breaker) { b.Record(true) }

func TestKeyedBreakersAreSeparate(t *testing.T) {
	f := clock.NewFake()
	k := breaker.NewKeyed[string](breaker.WithClock(f), breaker.WithThreshold(1), breaker.WithCooldown(time.Second))
	a := k.Breaker("a")
	trip(a)
	if got := k.Breaker("a"); got != a {
		t.Fatal("Breaker(a) changed while tracked")
	}
	wantState(t, a, breaker.Open)
	wantState(t, k.Breaker("b"), breaker.Closed)
	if n := k.Len(); n != 2 {
		t.Fatalf("Len() = %d, want 2", n)
	}
	f.Advance(time.Second)
	wantState(t, a, breaker.HalfOpen)
}

// Transitions, events and Stats of a key's breaker say the key: the key
// itself for strings, fmt.Sprint of it otherwise.
func TestKeyedSaysTheKey(t *testing.T) {
	var trs []breaker.Transition
	var evs []telemetry.Event
	f := clock.NewFake()
	opts := []breaker.Option{
		breaker.WithName("api"), breaker.WithClock(f), breaker.WithThreshold(1),
		breaker.WithOnStateChange(func(tr breaker.Transition) { trs = append(trs, tr) }),
		breaker.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) { e.Err = nil; evs = append(evs, e) })),
	}
	k := breaker.NewKeyed[string](opts...)
	b := k.Breaker("db.example")
	trip(b)
	_, _ = b.Allow()
	wantTr := []breaker.Transition{{
		Name: "api", Key: "db.example", From: breaker.Closed, To: breaker.Open, Generation: 2,
		At: f.Now(), Counts: breaker.Counts{Calls: 1, Failures: 1, FailureRatio: 1, ConsecutiveFailures: 1},
	}}
	if diff := cmp.Diff(wantTr, trs); diff != "" {
		t.Errorf("transitions mismatch (-want +got):\n%s", diff)
	}
	wantEv := []telemetry.Event{
		{Type: breaker.EventFailure, Name: "api", Key: "db.example"},
		{Type: breaker.EventOpened, Name: "api", Key: "db.example", From: "closed", To: "open", Wait: 30 * time.Second},
		{Type: breaker.EventRefused, Name: "api", Key: "db.example", Wait: 30 * time.Second},
	}
	if diff := cmp.Diff(wantEv, evs); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
	if s := b.Stats(); s.Key != "db.example" || s.State != breaker.Open {
		t.Errorf("Stats() = %+v, want key db.example, open", s)
	}

	ki := breaker.NewKeyed[int](opts...)
	if got := ki.Breaker(42).Stats().Key; got != "42" {
		t.Errorf("Stats().Key of int key 42 = %q, want %q", got, "42")
	}
	type host string
	kh := breaker.NewKeyed[host](opts...)
	if got := kh.Breaker("h").Stats().Key; got != "h" {
		t.Errorf("Stats().Key of host key h = %q, want %q", got, "h")
	}
	if got := breaker.New().Stats().Key; got != "" {
		t.Errorf("Stats().Key of a breaker from New = %q, want empty", got)
	}
}

// keysOf returns the keys of k as All yields them.
func keysOf[K comparable](k *breaker.Keyed[K]) []K {
	var ks []K
	for key := range k.All() {
		ks = append(ks, key)
	}
	return ks
}

// A new key makes the Keyed forget the least recently used closed breaker,
// even when an open one was used less recently; it is forgotten with its
// counts, silently.
func TestKeyedForgetsClosedBreakersFirst(t *testing.T) {
	var evs []telemetry.Event
	k := breaker.NewKeyed[string](breaker.WithClock(clock.NewFake()), breaker.WithThreshold(2), breaker.WithMaxKeys(3),
		breaker.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) { evs = append(evs, e) })))
	open := k.Breaker("open")
	trip(open)
	trip(open)
	k.Breaker("b").Record(true) // one failure: closed
	k.Breaker("c")
	evs = nil
	k.Breaker("d") // forgets b, the least recently used closed one
	if diff := cmp.Diff([]string{"open", "d", "c"}, keysOf(k)); diff != "" {
		t.Fatalf("keys mismatch (-want +got):\n%s", diff)
	}
	if got := k.Breaker("open"); got != open || got.State() != breaker.Open {
		t.Fatalf("the open breaker was forgotten (state %v)", got.State())
	}
	if c := k.Breaker("b").Counts(); c.Failures != 0 {
		t.Fatalf("b came back with %+v, want a new breaker", c)
	}
	if len(evs) != 0 {
		t.Errorf("forgetting closed breakers emitted %v, want nothing", evs)
	}
	if diff := cmp.Diff(breaker.KeyedStats{Keys: 3, MaxKeys: 3, Evicted: 2}, k.Stats()); diff != "" {
		t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
	}
}

// When every tracked breaker is open, half-open or forced, a new key
// makes the Keyed forget the least recently used of them, and it says so:
// an event and a count.
func TestKeyedReportsForgettingABreakerNotClosed(t *testing.T) {
	f := clock.NewFake()
	var evs []telemetry.Event
	k := breaker.NewKeyed[string](breaker.WithName("api"), breaker.WithClock(f), breaker.WithThreshold(1),
		breaker.WithCooldown(time.Second), breaker.WithMaxKeys(3),
		breaker.WithObserver(telemetry.ObserverFunc(func(e telemetry.Event) {
			if e.Type == breaker.EventEvicted {
				evs = append(evs, e)
			}
		})))
	trip(k.Breaker("a"))
	f.Advance(time.Second)
	wantState(t, k.Breaker("a"), breaker.HalfOpen)
	trip(k.Breaker("b"))
	k.Breaker("c").ForceClosed()
	trip(k.Breaker("d")) // all three not closed: forgets a (half-open), the least recently used
	k.Breaker("e")       // forgets b (open)
	want := []telemetry.Event{
		{Type: breaker.EventEvicted, Name: "api", Key: "a", From: "half-open"},
		{Type: breaker.EventEvicted, Name: "api", Key: "b", From: "open"},
	}
	if diff := cmp.Diff(want, evs); diff != "" {
		t.Fatalf("eviction events mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"d", "c", "e"}, keysOf(k)); diff != "" {
		t.Fatalf("keys mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(breaker.KeyedStats{Keys: 3, MaxKeys: 3, Evicted: 2, EvictedNotClosed: 2}, k.Stats()); diff != "" {
		t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
	}
	wantState(t, k.Breaker("a"), breaker.Closed) // it comes back new
}

// A breaker that changes state while nobody asks the Keyed for it (its
// caller holds it for a request) moves between the closed and the other
// breakers all the same.
func TestKeyedFollowsStateChangesBetweenUses(t *testing.T) {
	f := clock.NewFake()
	k := breaker.NewKeyed[string](breaker.WithClock(f), breaker.WithThreshold(1),
		breaker.WithCooldown(time.Second), breaker.WithMaxKeys(3))
	trip(k.Breaker("b"))
	trip(k.Breaker("c"))
	trip(k.Breaker("a"))
	f.Advance(time.Second)
	trial, err := k.Breaker("a").Allow() // half-open at its last use: a trial
	if err != nil {
		t.Fatalf("Allow = %v, want a trial", err)
	}
	trial.Done(nil) // a closes, without a use of the Keyed
	k.Breaker("d")  // forgets a, the only closed one, not b, the least recently used
	if diff := cmp.Diff([]string{"c", "b", "d"}, keysOf(k)); diff != "" {
		t.Fatalf("keys mismatch (-want +got):\n%s", diff)
	}
	if s := k.Stats(); s.EvictedNotClosed != 0 {
		t.Fatalf("Stats() = %+v: an open breaker was forgotten", s)
	}
}

func TestKeyedNaNKeysShareOneBreaker(t *testing.T) {
	k := breaker.NewKeyed[float64](breaker.WithClock(clock.NewFake()), breaker.WithMaxKeys(2))
	nan := k.Breaker(math.NaN())
	if k.Breaker(math.NaN()) != nan || k.Len() != 1 {
		t.Fatalf("NaN keys got two breakers (Len %d)", k.Len())
	}
	k.Breaker(1)
	k.Breaker(2) // forgets NaN's, the least recently used
	if k.Breaker(math.NaN()) == nan {
		t.Fatal("NaN's breaker was not forgotten")
	}
}

func TestKeyedUncomparableKeyPanicsAndStaysUsable(t *testing.T) {
	// An interface key holding a slice cannot be hashed: Breaker panics,
	// as a map lookup does, and must not leave the Keyed's lock held (a
	// server that recovers a handler's panic would then hang on every
	// later key).
	k := breaker.NewKeyed[any](breaker.WithClock(clock.NewFake()))
	a := k.Breaker("a")
	if msg := panicOf(func() { k.Breaker([]int{1}) }); !strings.Contains(msg, "uncomparable") {
		t.Fatalf("Breaker([]int{1}) panic = %q, want the runtime's uncomparable-key panic", msg)
	}
	got := testwait.Returns(t, "Breaker(\"a\") after a panicking key", func() *breaker.Breaker { return k.Breaker("a") })
	if got != a || k.Len() != 1 {
		t.Fatalf("after the panic: Breaker(\"a\") is another breaker (%v) or Len() = %d, want the same breaker and 1", got != a, k.Len())
	}
	p := breaker.KeyedPolicy[int](k, func(ctx context.Context) any { return ctx.Value(tenantKey{}) })
	bad := context.WithValue(context.Background(), tenantKey{}, map[string]int{})
	if msg := panicOf(func() { _, _ = p.Do(bad, func(context.Context) (int, error) { return 1, nil }) }); !strings.Contains(msg, "uncomparable") {
		t.Fatalf("KeyedPolicy with a map key: panic = %q, want the uncomparable-key panic", msg)
	}
	good := context.WithValue(context.Background(), tenantKey{}, "b")
	err := testwait.Returns(t, "KeyedPolicy after a panicking key", func() error {
		_, err := p.Do(good, func(context.Context) (int, error) { return 1, nil })
		return err
	})
	if err != nil {
		t.Fatalf("KeyedPolicy after a panicking key: %v", err)
	}
}

func TestKeyedDefaults(t *testing.T) {
	k := breaker.NewKeyed[int]()
	for key := range 10000 {
		k.Breaker(key)
	}
	if s := k.Stats(); s.Keys != 8192 || s.MaxKeys != 8192 || s.Evicted != 10000-8192 {
		t.Fatalf("Stats() = %+v, want the default cap 8192", s)
	}
	for _, c := range []struct {
		f    func()
		want string
	}{
		{func() { breaker.NewKeyed[int](breaker.WithConfig(breaker.Config{MaxKeys: -1})) }, "breaker: MaxKeys must be >= 0 (Off applies only to Threshold), got -1"},
		{func() { breaker.NewKeyed[int](breaker.WithMaxKeys(-1)) }, "breaker: WithMaxKeys(-1): the keys must be >= 1; leave the option out for the default, 8192"},
		{func() { breaker.NewKeyed[int](nil) }, "breaker: NewKeyed option must not be nil"},
		{func() { breaker.KeyedPolicy[int, int](nil, func(context.Context) int { return 0 }) }, "breaker: KeyedPolicy Keyed must not be nil"},
		{func() { breaker.KeyedPolicy[int](k, nil) }, "breaker: KeyedPolicy key must not be nil"},
	} {
		if got := panicOf(c.f); got != c.want {
			t.Errorf("panic = %q, want %q", got, c.want)
		}
	}
}

// panicOf returns the panic value of f as a string, "" if it did not panic.
func panicOf(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

type tenantKey struct{}

func tenantOf(ctx context.Context) string { s, _ := ctx.Value(tenantKey{}).(string); return s }

func TestKeyedPolicy(t *testing.T) {
	var asked []string
	k := breaker.NewKeyed[string](breaker.WithName("api"), breaker.WithClock(clock.NewFake()), breaker.WithThreshold(1))
	p := breaker.KeyedPolicy[int](k, func(ctx context.Context) string { asked = append(asked, tenantOf(ctx)); return tenantOf(ctx) })
	if got := p.String(); got != "breaker(api)" {
		t.Errorf("String() = %q, want breaker(api)", got)
	}
	ctx := func(tenant string) context.Context {
		return context.WithValue(context.Background(), tenantKey{}, tenant)
	}
	boom := errors.New("boom")
	if _, err := p.Do(ctx("a"), func(context.Context) (int, error) { return 0, boom }); err != boom {
		t.Fatalf("Do = %v, want boom", err)
	}
	_, err := p.Do(ctx("a"), func(context.Context) (int, error) { return 1, nil })
	var re *resilience.RefusedError
	if !errors.As(err, &re) || !errors.Is(err, breaker.ErrOpen) || re.Name() != "api" {
		t.Fatalf("Do on tripped key = %v, want the refusal of breaker api", err)
	}
	if v, err := p.Do(ctx("b"), func(context.Context) (int, error) { return 2, nil }); v != 2 || err != nil {
		t.Fatalf("Do on another key = %v, %v; want 2, nil", v, err)
	}
	if c := k.Breaker("b").Counts(); c.Successes != 1 {
		t.Fatalf("b's Counts() = %+v, want one success", c)
	}
	done, cancel := context.WithCancel(ctx("c"))
	cancel()
	if _, err := p.Do(done, func(context.Context) (int, error) { panic("op ran") }); err != context.Canceled {
		t.Fatalf("Do with a done ctx = %v, want context.Canceled", err)
	}
	if diff := cmp.Diff([]string{"a", "a", "b"}, asked); diff != "" {
		t.Errorf("keys asked mismatch (-want +got):\n%s", diff)
	}
	// A panicking op is a failure of its key's breaker, and goes on.
	func() {
		defer func() { _ = recover() }()
		_, _ = p.Do(ctx("d"), func(context.Context) (int, error) { panic("op panicked") })
	}()
	wantState(t, k.Breaker("d"), breaker.Open)

	tracked := ctx("b")
	op := func(context.Context) (int, error) { return 1, nil }
	if n := testing.AllocsPerRun(100, func() { _, _ = p.Do(tracked, op) }); n != 0 {
		t.Errorf("Do on a tracked key allocates %v times, want 0", n)
	}
}

// TestKeyedStress drives a small Keyed from many goroutines with random
// keys and outcomes, under -race: it never tracks more than its cap, and
// breakers changing state while others are forgotten deadlock nothing.
func TestKeyedStress(t *testing.T) {
	const maxKeys = 8
	f := clock.NewFake()
	k := breaker.NewKeyed[int](breaker.WithClock(f), breaker.WithThreshold(2), breaker.WithCooldown(time.Millisecond),
		breaker.WithMaxKeys(maxKeys), breaker.WithOnStateChange(func(breaker.Transition) {}))
	p := breaker.KeyedPolicy[int](k, func(ctx context.Context) int { return ctx.Value(tenantKey{}).(int) })
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 2))
			for i := range 3000 {
				key := r.IntN(3 * maxKeys)
				switch r.IntN(4) {
				case 0:
					_, _ = p.Do(context.WithValue(context.Background(), tenantKey{}, key), func(context.Context) (int, error) {
						return 0, errors.New("boom")
					})
				case 1:
					b := k.Breaker(key)
					if pm, err := b.Allow(); err == nil {
						pm.Done(nil)
					}
				case 2:
					for range k.All() {
					}
					if n := k.Len(); n > maxKeys {
						t.Errorf("Len() = %d, over the cap %d", n, maxKeys)
						return
					}
				default:
					if g == 0 && i%10 == 0 {
						f.Advance(time.Millisecond)
					}
					k.Breaker(key).Record(r.IntN(2) == 0)
				}
			}
		})
	}
	waitWithin(t, &wg, "the goroutines using the Keyed")
	if s := k.Stats(); s.Keys != maxKeys {
		t.Fatalf("Stats() = %+v, want %d keys", s, maxKeys)
	}
}

// TestKeyedMemoryPerKey: 10 000 keys hold at most 1 KiB each, map and
// breaker included (the key's own bytes too, here).
func TestKeyedMemoryPerKey(t *testing.T) {
	const n = 10000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("host-%05d.example", i)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	k := breaker.NewKeyed[string](breaker.WithMaxKeys(n))
	for _, key := range keys {
		k.Breaker(key)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(k)
	per := float64(after.HeapAlloc-before.HeapAlloc) / n
	t.Logf("%d keys: %.0f bytes a key", n, per)
	if per > 1024 {
		t.Fatalf("%d keys hold %.0f bytes each, want at most 1024", n, per)
	}
}
