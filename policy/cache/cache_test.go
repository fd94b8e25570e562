package cache_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errDown = errors.New("dependency down")

var errGateClosed = fmt.Errorf("gate closed: %w", resilience.ErrRefused)

// counter is an op that returns "v<n>" on its n-th call, or err if set.
type counter struct {
	calls atomic.Int64
	err   atomic.Pointer[error]
}

func (c *counter) op(ctx context.Context) (string, error) {
	n := c.calls.Add(1)
	if e := c.err.Load(); e != nil {
		return "", *e
	}
	return fmt.Sprintf("v%d", n), nil
}

func (c *counter) fail(err error) {
	if err == nil {
		c.err.Store(nil)
		return
	}
	c.err.Store(&err)
}

type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) Observe(e telemetry.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := string(e.Type) + " " + e.Key
	if e.Err != nil {
		s += " err=" + e.Err.Error()
	}
	if e.Elapsed != 0 {
		s += " age=" + e.Elapsed.String()
	}
	r.events = append(r.events, s)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events = nil
	return ev
}

// get calls p under key k and returns what it returned, with the Info.
func get(t *testing.T, p resilience.Policy[string], op resilience.Op[string], k string) (string, cache.Info, error) {
	t.Helper()
	ctx, info := cache.WithInfo(cache.Key(context.Background(), k))
	v, err := p.Do(ctx, op)
	return v, *info, err
}

func want(t *testing.T, gotV string, gotErr error, wantV string, wantErr error) {
	t.Helper()
	if gotV != wantV || !errors.Is(gotErr, wantErr) || (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("got (%q, %v), want (%q, %v)", gotV, gotErr, wantV, wantErr)
	}
}

func TestHitWithinTTLMissAfter(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Minute, cache.WithClock(clk))
		p, dep := c.Policy(), &counter{}
		v, info, err := get(t, p, dep.op, "a")
		want(t, v, err, "v1", nil)
		if info.Outcome != cache.Miss {
			t.Fatalf("first call: outcome %v, want miss", info.Outcome)
		}
		synctest.Wait()
		clk.Advance(time.Minute - 1)
		v, info, err = get(t, p, dep.op, "a")
		want(t, v, err, "v1", nil)
		if diff := cmp.Diff(cache.Info{Outcome: cache.Hit}, info); diff != "" {
			t.Fatalf("hit info mismatch (-want +got):\n%s", diff)
		}
		clk.Advance(1)
		v, _, err = get(t, p, dep.op, "a")
		want(t, v, err, "v2", nil)
		v, _, err = get(t, p, dep.op, "b")
		want(t, v, err, "v3", nil)
		synctest.Wait()
		s := c.Stats()
		if diff := cmp.Diff(cache.Stats{Hits: 1, Misses: 3, Entries: 2}, s); diff != "" {
			t.Fatalf("stats mismatch (-want +got):\n%s", diff)
		}
	})
}

func TestEmptyKeyBypasses(t *testing.T) {
	c := cache.New[string](time.Minute)
	p, dep := c.Policy(), &counter{}
	for i := 1; i <= 2; i++ {
		v, info, err := get(t, p, dep.op, "")
		want(t, v, err, fmt.Sprintf("v%d", i), nil)
		if info.Outcome != cache.Bypassed {
			t.Fatalf("outcome %v, want bypassed", info.Outcome)
		}
	}
	// No key in the context at all is the empty key.
	v, err := p.Do(context.Background(), dep.op)
	want(t, v, err, "v3", nil)
	if diff := cmp.Diff(cache.Stats{}, c.Stats()); diff != "" {
		t.Fatalf("a bypassed call touched the cache (-want +got):\n%s", diff)
	}
}

func TestKeyFuncPanicPropagates(t *testing.T) {
	c := cache.New[string](time.Minute, cache.WithKey(func(context.Context) string { panic("no key") }))
	dep := &counter{}
	defer func() {
		if r := recover(); r != "no key" {
			t.Fatalf("recovered %v, want the key function's panic", r)
		}
		if dep.calls.Load() != 0 || c.Stats() != (cache.Stats{}) {
			t.Fatalf("a panicking key function reached the op or the cache: %d calls, %+v", dep.calls.Load(), c.Stats())
		}
	}()
	_, _ = c.Policy().Do(context.Background(), dep.op)
}

func TestWithKeyFromContext(t *testing.T) {
	type tenant struct{}
	c := cache.New[string](time.Minute, cache.WithKey(func(ctx context.Context) string {
		s, _ := ctx.Value(tenant{}).(string)
		return s
	}))
	p, dep := c.Policy(), &counter{}
	ctx := context.WithValue(context.Background(), tenant{}, "t1")
	v1, _ := p.Do(ctx, dep.op)
	v2, _ := p.Do(ctx, dep.op)
	if v1 != "v1" || v2 != "v1" || dep.calls.Load() != 1 {
		t.Fatalf("got %q, %q after %d calls; want v1 twice from one call", v1, v2, dep.calls.Load())
	}
}

func TestTooLargeValueReturnedNotStored(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute, cache.WithMaxBytes(4), cache.WithSize(func(s string) int64 { return int64(len(s)) }))
		p := c.Policy()
		big := func(context.Context) (string, error) { return "large", nil }
		small := func(context.Context) (string, error) { return "ok", nil }
		wantDo(t, p, "k", small, "ok", nil)
		synctest.Wait()
		// A too-large value replaces nothing: the older value is removed.
		c.Invalidate(context.Background(), "k")
		wantDo(t, p, "k", big, "large", nil)
		synctest.Wait()
		if s := c.Stats(); s.Entries != 0 || s.Bytes != 0 {
			t.Fatalf("a value larger than MaxBytes was stored: %+v", s)
		}
		v, info, err := get(t, p, small, "k")
		want(t, v, err, "ok", nil)
		if info.Outcome != cache.Miss {
			t.Fatalf("outcome %v after a too-large value, want miss", info.Outcome)
		}
	})
}

func wantDo(t *testing.T, p resilience.Policy[string], k string, op resilience.Op[string], wantV string, wantErr error) {
	t.Helper()
	v, err := p.Do(cache.Key(context.Background(), k), op)
	want(t, v, err, wantV, wantErr)
}

func TestTooLargeValueRemovesOlder(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		size := "ok"
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleIfError(time.Hour),
			cache.WithMaxBytes(4), cache.WithSize(func(s string) int64 { return int64(len(s)) }))
		p := c.Policy()
		op := func(context.Context) (string, error) { return size, nil }
		wantDo(t, p, "k", op, "ok", nil)
		synctest.Wait()
		clk.Advance(time.Second)
		size = "large"
		wantDo(t, p, "k", op, "large", nil)
		synctest.Wait()
		// The older value must not come back as stale: a newer one was returned.
		failing := func(context.Context) (string, error) { return "", errDown }
		wantDo(t, p, "k", failing, "", errDown)
	})
}

func TestMaxEntriesEvictsLeastRecentlyUsed(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		rec := &recorder{}
		c := cache.New[string](time.Minute, cache.WithMaxEntries(2), cache.WithObserver(rec))
		p, dep := c.Policy(), &counter{}
		for _, k := range []string{"a", "b", "a", "c"} { // b is the least recently used when c comes
			_, _, _ = get(t, p, dep.op, k)
			synctest.Wait()
		}
		if got := dep.calls.Load(); got != 3 {
			t.Fatalf("%d loads, want 3", got)
		}
		_, info, _ := get(t, p, dep.op, "a")
		if info.Outcome != cache.Hit {
			t.Fatalf("a: %v, want hit", info.Outcome)
		}
		_, info, _ = get(t, p, dep.op, "b")
		if info.Outcome != cache.Miss {
			t.Fatalf("b: %v, want miss (evicted)", info.Outcome)
		}
		synctest.Wait()
		ev := rec.take()
		if !contains(ev, "cache.evicted b") || !contains(ev, "cache.evicted c") {
			t.Fatalf("events %q: want b then c evicted", ev)
		}
		if s := c.Stats(); s.Evictions != 2 || s.Entries != 2 {
			t.Fatalf("stats %+v: want 2 evictions, 2 entries", s)
		}
	})
}

func contains(ev []string, s string) bool {
	for _, e := range ev {
		if e == s {
			return true
		}
	}
	return false
}

func TestMaxBytesEvicts(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute, cache.WithMaxBytes(5), cache.WithSize(func(s string) int64 { return int64(len(s)) }))
		p := c.Policy()
		for _, k := range []string{"aa", "bb", "cc"} {
			_, _ = p.Do(cache.Key(context.Background(), k), func(context.Context) (string, error) { return k, nil })
			synctest.Wait()
		}
		if s := c.Stats(); s.Bytes != 4 || s.Entries != 2 || s.Evictions != 1 {
			t.Fatalf("stats %+v: want 4 bytes in 2 entries after 1 eviction", s)
		}
	})
}

func TestCoalescedMissesCallOnce(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute)
		p := c.Policy()
		release := make(chan struct{})
		var calls, running, most atomic.Int64
		op := func(ctx context.Context) (string, error) {
			calls.Add(1)
			if n := running.Add(1); n > most.Load() {
				most.Store(n)
			}
			defer running.Add(-1)
			<-release
			return "v", nil
		}
		const n = 8
		got := make(chan string, n)
		for range n {
			go func() {
				v, _ := p.Do(cache.Key(context.Background(), "k"), op)
				got <- v
			}()
		}
		synctest.Wait()
		close(release)
		for range n {
			if v := <-got; v != "v" {
				t.Fatalf("a waiter got %q, want v", v)
			}
		}
		if calls.Load() != 1 {
			t.Fatalf("%d calls of the dependency for %d concurrent misses, want 1", calls.Load(), n)
		}
		if s := c.Stats(); s.Misses != 1 || s.Coalesced != n-1 {
			t.Fatalf("stats %+v: want 1 miss, %d coalesced", s, n-1)
		}
	})
}

func TestWaiterThatGivesUpCancelsNobody(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		type reqID struct{}
		c := cache.New[string](time.Minute)
		p := c.Policy()
		release := make(chan struct{})
		var loadCtx context.Context
		op := func(ctx context.Context) (string, error) {
			loadCtx = ctx
			<-release
			if err := ctx.Err(); err != nil {
				return "", err
			}
			return "v", nil
		}
		base := context.WithValue(cache.Key(context.Background(), "k"), reqID{}, 7)
		firstCtx, cancelFirst := context.WithCancel(base)
		errs := make(chan error, 1)
		go func() { _, err := p.Do(firstCtx, op); errs <- err }()
		synctest.Wait()
		got := make(chan string, 1)
		go func() { v, _ := p.Do(base, op); got <- v }()
		synctest.Wait()
		cancelFirst()
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("the caller that gave up got %v, want context.Canceled", err)
		}
		if loadCtx.Err() != nil {
			t.Fatalf("the load's context ended with its first caller's: %v", loadCtx.Err())
		}
		if loadCtx.Value(reqID{}) != 7 {
			t.Fatalf("the load's context lost the first caller's values")
		}
		close(release)
		if v := <-got; v != "v" {
			t.Fatalf("the other waiter got %q, want v", v)
		}
	})
}

func TestLoadTimeoutBoundsTheLoad(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Minute, cache.WithClock(clk), cache.WithLoadTimeout(time.Second))
		op := func(ctx context.Context) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}
		errs := make(chan error, 1)
		go func() { _, err := c.Policy().Do(cache.Key(context.Background(), "k"), op); errs <- err }()
		synctest.Wait()
		clk.Advance(time.Second - 1)
		synctest.Wait()
		select {
		case err := <-errs:
			t.Fatalf("the load ended before LoadTimeout: %v", err)
		default:
		}
		clk.Advance(1)
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want the load canceled at LoadTimeout", err)
		}
	})
}

func TestStaleWhileRevalidate(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		rec := &recorder{}
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleWhileRevalidate(time.Minute), cache.WithObserver(rec))
		p := c.Policy()
		release := make(chan struct{})
		var calls atomic.Int64
		op := func(ctx context.Context) (string, error) {
			n := calls.Add(1)
			if n > 1 {
				<-release
			}
			return fmt.Sprintf("v%d", n), nil
		}
		_, _, _ = get(t, p, op, "k")
		synctest.Wait()
		clk.Advance(time.Second + 5*time.Millisecond)
		for range 3 {
			v, info, err := get(t, p, op, "k")
			want(t, v, err, "v1", nil)
			if diff := cmp.Diff(cache.Info{Outcome: cache.Hit, Stale: true, Age: 5 * time.Millisecond}, info); diff != "" {
				t.Fatalf("stale hit info mismatch (-want +got):\n%s", diff)
			}
		}
		synctest.Wait()
		if calls.Load() != 2 {
			t.Fatalf("%d calls, want 1 load and 1 refresh for 3 stale hits", calls.Load())
		}
		close(release)
		synctest.Wait()
		v, info, err := get(t, p, op, "k")
		want(t, v, err, "v2", nil)
		if info.Outcome != cache.Hit || info.Stale {
			t.Fatalf("after the refresh: %+v, want a fresh hit", info)
		}
		clk.Advance(time.Second + time.Minute) // past the window: a miss
		v, info, err = get(t, p, op, "k")
		want(t, v, err, "v3", nil)
		if info.Outcome != cache.Miss {
			t.Fatalf("past the window: %+v, want a miss", info)
		}
		if s := c.Stats(); s.Refreshes != 1 || s.Stale != 3 {
			t.Fatalf("stats %+v: want 1 refresh, 3 stale", s)
		}
	})
}

func TestRefreshesBoundedOverall(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleWhileRevalidate(time.Minute), cache.WithMaxRefreshes(1))
		p := c.Policy()
		release := make(chan struct{})
		var calls atomic.Int64
		loading := false
		op := func(ctx context.Context) (string, error) {
			calls.Add(1)
			if loading {
				<-release
			}
			return "v", nil
		}
		_, _, _ = get(t, p, op, "a")
		_, _, _ = get(t, p, op, "b")
		synctest.Wait()
		loading = true
		clk.Advance(2 * time.Second)
		_, _, _ = get(t, p, op, "a")
		_, _, _ = get(t, p, op, "b")
		synctest.Wait()
		if calls.Load() != 3 {
			t.Fatalf("%d calls: want 2 loads and 1 refresh (MaxRefreshes 1)", calls.Load())
		}
		close(release)
		synctest.Wait()
		_, _, _ = get(t, p, op, "b") // the slot is free again
		synctest.Wait()
		if calls.Load() != 4 {
			t.Fatalf("%d calls: the refresh slot was not given back", calls.Load())
		}
	})
}

func TestRefreshFailureKeepsStaleValue(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		rec := &recorder{}
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleWhileRevalidate(time.Minute), cache.WithObserver(rec))
		p, dep := c.Policy(), &counter{}
		_, _, _ = get(t, p, dep.op, "k")
		synctest.Wait()
		dep.fail(errDown)
		clk.Advance(2 * time.Second)
		v, _, err := get(t, p, dep.op, "k")
		want(t, v, err, "v1", nil)
		synctest.Wait()
		v, info, err := get(t, p, dep.op, "k")
		want(t, v, err, "v1", nil)
		if !info.Stale {
			t.Fatalf("info %+v: want stale", info)
		}
		synctest.Wait()
		ev := rec.take()
		if !contains(ev, "cache.refresh_failed k err=dependency down") {
			t.Fatalf("events %q: want a refresh_failed", ev)
		}
		if s := c.Stats(); s.RefreshFailures != 2 {
			t.Fatalf("stats %+v: want 2 refresh failures", s)
		}
	})
}

func TestStaleIfError(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleIfError(time.Minute))
		p, dep := c.Policy(), &counter{}
		_, _, _ = get(t, p, dep.op, "k")
		synctest.Wait()
		dep.fail(errDown)
		clk.Advance(time.Second + time.Minute - 1)
		ctx, info := cache.WithInfo(cache.Key(context.Background(), "k"))
		v, err := p.Do(ctx, dep.op)
		want(t, v, err, "v1", nil)
		if !cache.WasStale(ctx) {
			t.Fatal("WasStale is false after a stale value")
		}
		if cache.WasStale(cache.Key(context.Background(), "k")) {
			t.Fatal("WasStale is true for a context without an Info")
		}
		if diff := cmp.Diff(cache.Info{Outcome: cache.Miss, Stale: true, Age: time.Minute - 1, Err: errDown}, *info, cmp.Comparer(func(a, b error) bool { return a == b })); diff != "" {
			t.Fatalf("info mismatch (-want +got):\n%s", diff)
		}
		clk.Advance(1) // MaxStale reached: the error comes through
		v, info2, err := get(t, p, dep.op, "k")
		want(t, v, err, "", errDown)
		if info2.Stale {
			t.Fatal("an error marked stale")
		}
	})
}

func TestStaleIfErrorCoversGuardRefusal(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleIfError(time.Minute))
		open := false
		guard := resilience.New("gate", func(ctx context.Context, next resilience.Next[string]) (string, error) {
			if open {
				return "", resilience.Refuse(errGateClosed, "gate", time.Second)
			}
			return next.Call(ctx)
		})
		p := c.Policy().Then(guard)
		dep := &counter{}
		_, _, _ = get(t, p, dep.op, "k")
		synctest.Wait()
		open = true
		clk.Advance(2 * time.Second)
		v, info, err := get(t, p, dep.op, "k")
		want(t, v, err, "v1", nil)
		if !info.Stale || !errors.Is(info.Err, resilience.ErrRefused) {
			t.Fatalf("info %+v: want stale, with the refusal", info)
		}
	})
}

func TestStaleIfChoosesErrors(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		errBad := errors.New("bad request")
		c := cache.New[string](time.Second, cache.WithClock(clk),
			cache.WithStaleIfError(time.Minute), cache.WithStaleIf(func(err error) bool { return !errors.Is(err, errBad) }))
		p, dep := c.Policy(), &counter{}
		_, _, _ = get(t, p, dep.op, "k")
		synctest.Wait()
		clk.Advance(2 * time.Second)
		dep.fail(errBad)
		v, _, err := get(t, p, dep.op, "k")
		want(t, v, err, "", errBad)
		dep.fail(errDown)
		v, _, err = get(t, p, dep.op, "k")
		want(t, v, err, "v1", nil)
	})
}

func TestNegativeCaching(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		errNotFound := errors.New("not found")
		c := cache.New[string](time.Minute, cache.WithClock(clk),
			cache.WithNegativeTTL(time.Second), cache.WithNegativeIf(func(err error) bool { return errors.Is(err, errNotFound) }))
		p, dep := c.Policy(), &counter{}
		dep.fail(errNotFound)
		_, _, err := get(t, p, dep.op, "k")
		want(t, "", err, "", errNotFound)
		synctest.Wait()
		_, info, err := get(t, p, dep.op, "k")
		want(t, "", err, "", errNotFound)
		if info.Outcome != cache.Hit || dep.calls.Load() != 1 {
			t.Fatalf("%+v after %d calls: want the error cached", info, dep.calls.Load())
		}
		clk.Advance(time.Second)
		dep.fail(errDown) // not chosen: not cached
		_, _, _ = get(t, p, dep.op, "k")
		synctest.Wait()
		_, _, _ = get(t, p, dep.op, "k")
		if dep.calls.Load() != 3 {
			t.Fatalf("%d calls: an error NegativeIf rejects was cached", dep.calls.Load())
		}
	})
}

func TestInvalidate(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute)
		p, dep := c.Policy(), &counter{}
		_, _, _ = get(t, p, dep.op, "k")
		synctest.Wait()
		c.Invalidate(context.Background(), "k")
		v, _, _ := get(t, p, dep.op, "k")
		if v != "v2" {
			t.Fatalf("after Invalidate got %q, want a new load (v2)", v)
		}
	})
}

func TestInvalidateDuringLoadDropsItsResult(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute)
		p := c.Policy()
		release := make(chan struct{})
		var calls atomic.Int64
		op := func(ctx context.Context) (string, error) {
			n := calls.Add(1)
			if n == 1 {
				<-release
			}
			return fmt.Sprintf("v%d", n), nil
		}
		got := make(chan string, 1)
		go func() { v, _ := p.Do(cache.Key(context.Background(), "k"), op); got <- v }()
		synctest.Wait()
		c.Invalidate(context.Background(), "k")
		v, _ := p.Do(cache.Key(context.Background(), "k"), op) // a new load, not the old one
		if v != "v2" {
			t.Fatalf("after Invalidate during a load: %q, want v2", v)
		}
		close(release)
		if v := <-got; v != "v1" {
			t.Fatalf("the waiter of the old load got %q, want v1", v)
		}
		synctest.Wait()
		if v, _ := p.Do(cache.Key(context.Background(), "k"), op); v != "v2" {
			t.Fatalf("the invalidated load's result was stored: got %q, want v2", v)
		}
	})
}

func TestPurge(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute)
		p, dep := c.Policy(), &counter{}
		_, _, _ = get(t, p, dep.op, "a")
		_, _, _ = get(t, p, dep.op, "b")
		synctest.Wait()
		c.Purge(context.Background())
		if s := c.Stats(); s.Entries != 0 {
			t.Fatalf("%d entries after Purge", s.Entries)
		}
		_, info, _ := get(t, p, dep.op, "a")
		if info.Outcome != cache.Miss {
			t.Fatalf("after Purge: %v, want miss", info.Outcome)
		}
	})
}

// TestLoadPanicReachesEveryWaiter runs the load in the first caller's
// goroutine (its context cannot end) and in a goroutine of its own (it
// can): either way each caller gets the panic.
// explode panics with v; the stack of a load's panic must show it.
//
//go:noinline
func explode(v any) { panic(v) }

// checkPanicError fails t unless r, a recovered value, is a
// *cache.PanicError of value want whose stack shows where the load
// panicked (explode), or for a want other than from explode, any stack.
func checkPanicError(t *testing.T, r any, want any) {
	t.Helper()
	pe, ok := r.(*cache.PanicError)
	if !ok {
		t.Fatalf("recovered %T %v, want a *cache.PanicError", r, r)
	}
	if pe.Value != want {
		t.Fatalf("PanicError.Value = %v, want %v", pe.Value, want)
	}
	if want == "boom" && !strings.Contains(string(pe.Stack), "cache_test.explode") {
		t.Fatalf("PanicError.Stack does not show the load's panic:\n%s", pe.Stack)
	}
	if !strings.Contains(pe.Error(), fmt.Sprint(want)) || !strings.Contains(pe.Error(), string(pe.Stack)) {
		t.Fatalf("PanicError.Error() = %q: want the value and the stack", pe.Error())
	}
	if !errors.Is(pe, cache.ErrLoadPanicked) {
		t.Fatalf("errors.Is(%v, ErrLoadPanicked) = false", pe)
	}
}

func TestLoadPanicErrorUnwrapsAnError(t *testing.T) {
	errBoom := &fs.PathError{Op: "open", Path: "x", Err: fs.ErrNotExist}
	c := cache.New[string](time.Minute)
	defer func() {
		pe, ok := recover().(*cache.PanicError)
		if !ok {
			t.Fatal("want a *cache.PanicError")
		}
		var pathErr *fs.PathError
		if !errors.As(pe, &pathErr) || pathErr != errBoom || !errors.Is(pe, fs.ErrNotExist) {
			t.Fatalf("errors.As/Is do not reach the load's error %v through %v", errBoom, pe.Value)
		}
		if errors.Unwrap(pe) != error(errBoom) {
			t.Fatalf("errors.Unwrap = %v, want %v", errors.Unwrap(pe), errBoom)
		}
	}()
	_, _ = c.Policy().Do(cache.Key(context.Background(), "k"), func(context.Context) (string, error) { panic(errBoom) })
}

func TestLoadPanicErrorOfANonError(t *testing.T) {
	pe := &cache.PanicError{Value: 42}
	if errors.Unwrap(pe) != nil {
		t.Fatalf("errors.Unwrap of a PanicError of 42 = %v, want nil", errors.Unwrap(pe))
	}
}

func TestLoadPanicReachesEveryWaiter(t *testing.T) {
	for _, cancellable := range []bool{false, true} {
		t.Run(fmt.Sprintf("cancellable=%v", cancellable), func(t *testing.T) {
			testwait.Bubble(t, func(t *testing.T) {
				c := cache.New[string](time.Minute)
				p := c.Policy()
				release := make(chan struct{})
				op := func(ctx context.Context) (string, error) {
					<-release
					explode("boom")
					return "", nil
				}
				ctx := cache.Key(context.Background(), "k")
				if cancellable {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
				}
				const n = 3
				got := make(chan any, n)
				for range n {
					go func() {
						defer func() { got <- recover() }()
						_, _ = p.Do(ctx, op)
					}()
				}
				synctest.Wait()
				close(release)
				for range n {
					checkPanicError(t, <-got, "boom")
				}
				synctest.Wait()
				if s := c.Stats(); s.Entries != 0 || s.Misses != 1 || s.Coalesced != n-1 {
					t.Fatalf("stats %+v: want one load, nothing stored", s)
				}
			})
		})
	}
}

func TestObserverEvents(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		rec := &recorder{}
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleIfError(time.Minute), cache.WithObserver(rec), cache.WithName("users"))
		p, dep := c.Policy(), &counter{}
		_, _, _ = get(t, p, dep.op, "k")
		synctest.Wait()
		_, _, _ = get(t, p, dep.op, "k")
		clk.Advance(2 * time.Second)
		dep.fail(errDown)
		_, _, _ = get(t, p, dep.op, "k")
		wantEv := []string{"cache.miss k", "cache.hit k", "cache.miss k", "cache.stale k err=dependency down age=1s"}
		if diff := cmp.Diff(wantEv, rec.take()); diff != "" {
			t.Fatalf("events mismatch (-want +got):\n%s", diff)
		}
		if p.String() != "cache(users)" {
			t.Fatalf("layer %q, want cache(users)", p.String())
		}
	})
}

func TestGuard(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute)
		var calls atomic.Int64
		fetch := func(ctx context.Context, id int) (string, error) {
			calls.Add(1)
			return fmt.Sprintf("user %d", id), nil
		}
		get := cache.Guard(c, func(id int) string {
			if id == 0 {
				return ""
			}
			return fmt.Sprint(id)
		}, fetch)
		for range 2 {
			if v, _ := get(context.Background(), 7); v != "user 7" {
				t.Fatalf("got %q", v)
			}
			synctest.Wait()
		}
		_, _ = get(context.Background(), 0)
		_, _ = get(context.Background(), 0)
		if calls.Load() != 3 {
			t.Fatalf("%d calls, want 1 for id 7 (cached) and 2 for id 0 (bypassed)", calls.Load())
		}
	})
}

// mapStore is a Store on a map, as a shared store would be.
type mapStore struct {
	mu sync.Mutex
	m  map[string]cache.Entry[string]
}

func (s *mapStore) Get(_ context.Context, k string) (cache.Entry[string], bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[k]
	return e, ok
}
func (s *mapStore) Set(_ context.Context, k string, e cache.Entry[string]) {
	s.mu.Lock()
	s.m[k] = e
	s.mu.Unlock()
}
func (s *mapStore) Delete(_ context.Context, k string) { s.mu.Lock(); delete(s.m, k); s.mu.Unlock() }
func (s *mapStore) Purge(context.Context)              { s.mu.Lock(); clear(s.m); s.mu.Unlock() }

func TestSharedStore(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		st := &mapStore{m: map[string]cache.Entry[string]{}}
		a := cache.New[string](time.Minute, cache.WithClock(clk), cache.WithStore[string](st))
		b := cache.New[string](time.Minute, cache.WithClock(clk), cache.WithStore[string](st))
		dep := &counter{}
		_, _, _ = get(t, a.Policy(), dep.op, "k")
		synctest.Wait()
		v, info, _ := get(t, b.Policy(), dep.op, "k")
		if v != "v1" || info.Outcome != cache.Hit {
			t.Fatalf("the second cache got %q (%v), want the first's v1 as a hit", v, info.Outcome)
		}
		e := st.m["k"]
		if !e.Expires.Equal(clk.Now().Add(time.Minute)) || !e.Discard.Equal(e.Expires) {
			t.Fatalf("stored entry %+v: want Expires and Discard at now+TTL", e)
		}
		b.Invalidate(context.Background(), "k")
		if _, ok := st.m["k"]; ok {
			t.Fatal("Invalidate did not reach the store")
		}
	})
}

func TestOptionsPanicNamingThemselves(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"New ttl 0", func() { cache.New[string](0) }, "cache: New(0s)"},
		{"WithMaxEntries", func() { cache.WithMaxEntries(0) }, "cache: WithMaxEntries(0)"},
		{"WithMaxBytes", func() { cache.WithMaxBytes(-1) }, "cache: WithMaxBytes(-1)"},
		{"WithSize nil", func() { cache.WithSize[string](nil) }, "cache: WithSize(nil)"},
		{"WithStaleWhileRevalidate", func() { cache.WithStaleWhileRevalidate(0) }, "cache: WithStaleWhileRevalidate(0s)"},
		{"WithStaleIfError", func() { cache.WithStaleIfError(-time.Second) }, "cache: WithStaleIfError(-1s)"},
		{"WithMaxRefreshes", func() { cache.WithMaxRefreshes(0) }, "cache: WithMaxRefreshes(0)"},
		{"WithLoadTimeout", func() { cache.WithLoadTimeout(0) }, "cache: WithLoadTimeout(0s)"},
		{"WithNegativeIf", func() { cache.WithNegativeIf(nil) }, "cache: WithNegativeIf(nil)"},
		{"WithKey", func() { cache.WithKey(nil) }, "cache: WithKey(nil)"},
		{"WithNegativeTTL", func() { cache.WithNegativeTTL(0) }, "cache: WithNegativeTTL(0s)"},
		{"WithStaleIf nil", func() { cache.WithStaleIf(nil) }, "cache: WithStaleIf(nil)"},
		{"WithNegativeTTL without WithNegativeIf", func() { cache.New[string](time.Second, cache.WithNegativeTTL(time.Second)) }, "cache: NegativeTTL 1s needs NegativeIf (WithNegativeIf)"},
		{"nil option", func() { cache.New[string](time.Second, nil) }, "cache: New option must not be nil"},
		{"size of another type", func() {
			cache.New[string](time.Second, cache.WithSize(func(int) int64 { return 0 }))
		}, "cache: WithSize: the size function is a func(int) int64, the cache holds string"},
		{"MaxBytes without Size", func() { cache.New[string](time.Second, cache.WithMaxBytes(1)) }, "cache: MaxBytes 1 needs a size function"},
		{"Guard nil fn", func() { cache.Guard[int, string](cache.New[string](time.Second), func(int) string { return "" }, nil) }, "cache: Guard fn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.HasPrefix(s, tc.want) {
					t.Fatalf("panic %v, want one starting %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

func TestConfigJSONRoundTrip(t *testing.T) {
	c := cache.Config{TTL: time.Minute, MaxEntries: 100, StaleIfError: time.Hour, LoadTimeout: resilience.Off, Name: "users"}
	b, err := c.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"TTL":"1m0s","MaxEntries":100,"StaleIfError":"1h0m0s","LoadTimeout":"off","Name":"users"}`; string(b) != want {
		t.Fatalf("JSON %s, want %s", b, want)
	}
	var got cache.Config
	if err := got.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Fatalf("round trip mismatch (-want +got):\n%s", diff)
	}
	if err := got.UnmarshalJSON([]byte(`{"Bogus":1}`)); err == nil {
		t.Fatal("an unknown field was accepted")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		c    cache.Config
		want string
	}{
		{cache.Config{}, ""},
		{cache.Config{TTL: -1}, "cache: TTL must be > 0, got off"},
		{cache.Config{MaxEntries: -2}, "cache: MaxEntries must be >= 1, got -2"},
		{cache.Config{StaleWhileRevalidate: -time.Second}, "cache: StaleWhileRevalidate must be >= 0 (0: off), got -1s"},
		{cache.Config{LoadTimeout: -2}, "cache: LoadTimeout must be > 0 or off, got -2ns"},
		{cache.Config{NegativeTTL: time.Second}, "cache: NegativeTTL 1s needs NegativeIf (WithNegativeIf)"},
		{cache.Config{MaxRefreshes: -1}, "cache: MaxRefreshes must be >= 1, got -1"},
	} {
		err := tc.c.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("Validate(%+v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

func TestWithConfigKeepsTTL(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		c := cache.New[string](time.Minute, cache.WithClock(clk), cache.WithConfig(cache.Config{MaxEntries: 5}))
		p, dep := c.Policy(), &counter{}
		_, _, _ = get(t, p, dep.op, "k")
		synctest.Wait()
		clk.Advance(time.Minute - 1)
		if _, info, _ := get(t, p, dep.op, "k"); info.Outcome != cache.Hit {
			t.Fatalf("WithConfig without TTL changed New's TTL: %v", info.Outcome)
		}
	})
}

func TestShardedCacheStaysWithinMaxEntries(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		const max = 1024 // 16 shards of 64
		c := cache.New[string](time.Minute, cache.WithMaxEntries(max))
		get := cache.Guard(c, func(k string) string { return k }, func(_ context.Context, k string) (string, error) { return k, nil })
		for i := range 4 * max {
			k := strconv.Itoa(i)
			if v, _ := get(context.Background(), k); v != k {
				t.Fatalf("got %q for key %q", v, k)
			}
		}
		synctest.Wait()
		s := c.Stats()
		if s.Entries > max || s.Entries < max/2 || s.Evictions != uint64(4*max-s.Entries) {
			t.Fatalf("stats %+v: want at most %d entries, the rest evicted", s, max)
		}
		if v, _ := get(context.Background(), strconv.Itoa(4*max-1)); v != strconv.Itoa(4*max-1) {
			t.Fatal("the last key is not served")
		}
	})
}

func TestGuardNilContextPanics(t *testing.T) {
	get := cache.Guard(cache.New[string](time.Minute), func(k string) string { return k }, func(context.Context, string) (string, error) { return "", nil })
	defer func() {
		if r, _ := recover().(string); !strings.HasPrefix(r, "cache: a guarded function called with a nil context") {
			t.Fatalf("panic %q", r)
		}
	}()
	var ctx context.Context
	_, _ = get(ctx, "k")
}

func TestDoneContextStartsNoLoad(t *testing.T) {
	c := cache.New[string](time.Minute)
	dep := &counter{}
	ctx, cancel := context.WithCancel(cache.Key(context.Background(), "k"))
	cancel()
	if _, err := c.Policy().Do(ctx, dep.op); !errors.Is(err, context.Canceled) || dep.calls.Load() != 0 {
		t.Fatalf("got %v after %d calls: want context.Canceled and no load", err, dep.calls.Load())
	}
}

func TestSizePanicReachesTheCallers(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		c := cache.New[string](time.Minute, cache.WithSize(func(string) int64 { panic("size") }))
		defer func() {
			checkPanicError(t, recover(), "size")
			synctest.Wait()
			if s := c.Stats(); s.Entries != 0 {
				t.Fatalf("stats %+v: nothing should be stored", s)
			}
		}()
		_, _ = c.Policy().Do(cache.Key(context.Background(), "k"), func(context.Context) (string, error) { return "v", nil })
	})
}

func TestRefreshPanicIsReported(t *testing.T) {
	testwait.Bubble(t, func(t *testing.T) {
		clk := clock.NewFake()
		rec := &recorder{}
		c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleWhileRevalidate(time.Minute), cache.WithObserver(rec))
		p := c.Policy()
		panics := false
		op := func(context.Context) (string, error) {
			if panics {
				panic("boom")
			}
			return "v", nil
		}
		_, _, _ = get(t, p, op, "k")
		synctest.Wait()
		clk.Advance(2 * time.Second)
		panics = true
		v, _, err := get(t, p, op, "k")
		want(t, v, err, "v", nil)
		synctest.Wait()
		if ev := rec.take(); !contains(ev, "cache.refresh_failed k err="+cache.ErrLoadPanicked.Error()) {
			t.Fatalf("events %q: want a refresh_failed with ErrLoadPanicked", ev)
		}
	})
}

// reentrantStore calls back into its cache from Set: it would deadlock if
// the cache held a lock of its own while it calls the Store.
type reentrantStore struct {
	mapStore
	c *cache.Cache[string]
}

func (s *reentrantStore) Set(ctx context.Context, k string, e cache.Entry[string]) {
	s.c.Invalidate(ctx, k) // takes the lock of k's shard
	s.mapStore.Set(ctx, k, e)
}

func TestStoreIsCalledWithoutLocks(t *testing.T) {
	st := &reentrantStore{mapStore: mapStore{m: map[string]cache.Entry[string]{}}}
	st.c = cache.New[string](time.Minute, cache.WithStore[string](st))
	done := make(chan string, 1)
	go func() {
		ctx, cancel := context.WithCancel(cache.Key(context.Background(), "k"))
		defer cancel()
		p := st.c.Policy()
		_, _ = p.Do(ctx, func(context.Context) (string, error) { return "v", nil })
		v, _ := p.Do(ctx, func(context.Context) (string, error) { return "second load", nil })
		done <- v
	}()
	if v := testwait.Recv(t, done, "calls through a cache whose Store calls back into it"); v != "v" {
		t.Fatalf("got %q, want the stored v", v)
	}
}
