package cache_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/cache"
)

var errNotFound = errors.New("not found")

// keys are the keys of the model: few, so that calls meet their entries,
// and one more than two, so that evictions by second chance and by least
// recent use differ.
var keys = []string{"a", "b", "c"}

// modelEntry is what the reference model holds for a key.
type modelEntry struct {
	value            string // "" for a negative entry
	err              error
	expires, discard time.Time
}

// cacheMachine runs a real Cache beside a reference model: a map of
// entries with explicit times and a recency list with the marks of second
// chance (see the package documentation), driven by random calls,
// clock advances, failures and invalidations. It runs inside a synctest
// bubble, so that after each action every load and refresh has landed.
type cacheMachine struct {
	c             *cache.Cache[string]
	clk           *clock.Fake
	ttl, swr, sie time.Duration
	negTTL        time.Duration
	maxEntries    int
	failing       error // the dependency's error now; nil: it answers
	version       map[string]int
	model         map[string]*modelEntry
	recency       []string        // most recently stored (or passed over) first
	used          map[string]bool // hit since it last reached the back
	trace         []string
	cover         *coverage
	shared        *mapStore // nil: the in-memory store

	mu        sync.Mutex // guards what loads touch:
	running   map[string]int
	calls     int // calls of the dependency
	wantCalls int // calls the model expects
	overlap   atomic.Bool
}

func newCacheMachine(t *rapid.T, cover *coverage) *cacheMachine {
	m := &cacheMachine{
		cover:      cover,
		clk:        clock.NewFake(),
		ttl:        10 * time.Second,
		maxEntries: rapid.IntRange(1, 4).Draw(t, "maxEntries"),
		version:    map[string]int{},
		model:      map[string]*modelEntry{},
		used:       map[string]bool{},
		running:    map[string]int{},
	}
	opts := []cache.Option{cache.WithClock(m.clk)}
	if rapid.Bool().Draw(t, "store") {
		// A Store bounds itself: this one keeps every entry.
		m.shared = &mapStore{m: map[string]cache.Entry[string]{}}
		m.maxEntries = 1 << 30
		opts = append(opts, cache.WithStore[string](m.shared))
	} else {
		opts = append(opts, cache.WithMaxEntries(m.maxEntries))
	}
	if rapid.Bool().Draw(t, "swr") {
		m.swr = time.Duration(rapid.IntRange(1, 20).Draw(t, "swrSeconds")) * time.Second
		opts = append(opts, cache.WithStaleWhileRevalidate(m.swr))
	}
	if rapid.Bool().Draw(t, "sie") {
		// Beyond the stale-while-revalidate window: within it, a call
		// gets a stale value without a load to fail.
		m.sie = m.swr + time.Duration(rapid.IntRange(1, 30).Draw(t, "sieSeconds"))*time.Second
		opts = append(opts, cache.WithStaleIfError(m.sie))
	}
	if rapid.Bool().Draw(t, "negative") {
		m.negTTL = time.Duration(rapid.IntRange(1, 20).Draw(t, "negSeconds")) * time.Second
		opts = append(opts, cache.WithNegativeTTL(m.negTTL), cache.WithNegativeIf(func(err error) bool { return errors.Is(err, errNotFound) }))
	}
	m.c = cache.New[string](m.ttl, opts...)
	if m.shared != nil {
		m.cover.store++
	}
	return m
}

func (m *cacheMachine) logf(format string, args ...any) {
	m.trace = append(m.trace, fmt.Sprintf("%v: ", m.clk.Now().Sub(time.Time{}.Add(0)).Truncate(time.Second))+fmt.Sprintf(format, args...))
}

func (m *cacheMachine) fatalf(t *rapid.T, format string, args ...any) {
	t.Helper()
	t.Fatalf("%s\ntrace:\n  %s", fmt.Sprintf(format, args...), strings.Join(m.trace, "\n  "))
}

// op is the dependency: "key#version@unixnano" or the current failure.
// It fails the test if two loads of one key run at once. If release is
// not nil, it waits for release to be closed.
func (m *cacheMachine) op(t *rapid.T, key string, release chan struct{}) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		m.mu.Lock()
		m.calls++
		m.running[key]++
		n := m.running[key]
		failing := m.failing
		m.mu.Unlock()
		defer func() { m.mu.Lock(); m.running[key]--; m.mu.Unlock() }()
		if n > 1 {
			m.overlap.Store(true)
		}
		if release != nil {
			<-release
		}
		if failing != nil {
			return "", failing
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.version[key]++
		return fmt.Sprintf("%s#%d@%d", key, m.version[key], m.clk.Now().UnixNano()), nil
	}
}

// loaded is the value the dependency gave key last, stamped now.
func (m *cacheMachine) loaded(key string, now time.Time) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return fmt.Sprintf("%s#%d@%d", key, m.version[key], now.UnixNano())
}

// touch is a call that finds the entry of key: it marks it used.
func (m *cacheMachine) touch(key string) { m.used[key] = true }

// toFront puts key at the front of the recency list, unmarked.
func (m *cacheMachine) toFront(key string) {
	m.recency = slices.DeleteFunc(m.recency, func(k string) bool { return k == key })
	m.recency = slices.Insert(m.recency, 0, key)
	m.used[key] = false
}

func (m *cacheMachine) drop(key string) {
	delete(m.model, key)
	delete(m.used, key)
	m.recency = slices.DeleteFunc(m.recency, func(k string) bool { return k == key })
}

// store puts what a load got into the model, as the cache stores it.
func (m *cacheMachine) store(key, v string, err error) {
	now := m.clk.Now()
	switch {
	case err == nil:
		m.model[key] = &modelEntry{value: v, expires: now.Add(m.ttl), discard: now.Add(m.ttl + max(m.swr, m.sie))}
	case m.negTTL > 0 && errors.Is(err, errNotFound):
		m.model[key] = &modelEntry{err: err, expires: now.Add(m.negTTL), discard: now.Add(m.negTTL)}
	default:
		return
	}
	m.toFront(key)
	// Second chance: the back entry goes unless it is marked (and there
	// are chances left, one per entry held) or is the one just stored;
	// then it loses its mark and goes to the front.
	for chances := len(m.recency); len(m.recency) > m.maxEntries; {
		back := m.recency[len(m.recency)-1]
		if back == key || chances > 0 && m.used[back] {
			m.toFront(back)
			chances--
			continue
		}
		m.cover.evicted++
		m.drop(back)
	}
}

// checkAge fails if v is older than the cache may return it.
func (m *cacheMachine) checkAge(t *rapid.T, v string) {
	if v == "" {
		return
	}
	at, err := strconv.ParseInt(v[strings.LastIndexByte(v, '@')+1:], 10, 64)
	if err != nil {
		m.fatalf(t, "value %q: %v", v, err)
	}
	if past := m.clk.Now().Sub(time.Unix(0, at).Add(m.ttl)); past >= max(m.swr, m.sie) && past >= 0 {
		m.fatalf(t, "value %q returned %v past its TTL; the longest stale window is %v", v, past, max(m.swr, m.sie))
	}
}

func (m *cacheMachine) Get(t *rapid.T) {
	key := rapid.SampledFrom(keys).Draw(t, "key")
	now := m.clk.Now()
	ctx, info := cache.WithInfo(cache.Key(context.Background(), key))
	v, err := m.c.Policy().Do(ctx, m.op(t, key, nil))
	synctest.Wait() // a background refresh has landed
	m.logf("Get(%s) = %q, %v, %+v", key, v, err, *info)
	m.checkAge(t, v)

	e := m.model[key]
	if e != nil && !now.Before(e.discard) {
		m.drop(key)
		e = nil
	}
	if e != nil {
		m.touch(key)
	}
	var wantV string
	var wantErr error
	wantInfo := cache.Info{Outcome: cache.Miss}
	switch {
	case e != nil && now.Before(e.expires):
		wantV, wantErr, wantInfo = e.value, e.err, cache.Info{Outcome: cache.Hit}
		if e.err != nil {
			m.cover.negative++
		}
	case e != nil && e.err == nil && now.Before(e.expires.Add(m.swr)):
		wantV, wantInfo = e.value, cache.Info{Outcome: cache.Hit, Stale: true, Age: now.Sub(e.expires)}
		m.cover.swr++
		m.wantCalls++ // the refresh
		if m.failing == nil {
			m.store(key, m.loaded(key, now), nil)
		} else {
			m.store(key, "", m.failing)
		}
	case m.failing == nil:
		m.wantCalls++
		wantV = m.loaded(key, now)
		m.store(key, wantV, nil)
	default:
		m.wantCalls++
		negative := m.negTTL > 0 && errors.Is(m.failing, errNotFound)
		if !negative && e != nil && e.err == nil && now.Before(e.expires.Add(m.sie)) {
			wantV, wantInfo = e.value, cache.Info{Outcome: cache.Miss, Stale: true, Age: now.Sub(e.expires), Err: m.failing}
			m.cover.sie++
		} else {
			wantErr = m.failing
		}
		m.store(key, "", m.failing)
	}
	if v != wantV || !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
		m.fatalf(t, "Get(%s) = (%q, %v), want (%q, %v)", key, v, err, wantV, wantErr)
	}
	if *info != wantInfo {
		m.fatalf(t, "Get(%s) info %+v, want %+v", key, *info, wantInfo)
	}
}

func (m *cacheMachine) Advance(t *rapid.T) {
	d := time.Duration(rapid.IntRange(1, 12).Draw(t, "seconds")) * time.Second
	m.clk.Advance(d)
	m.logf("Advance(%v)", d)
}

func (m *cacheMachine) Fail(t *rapid.T) {
	failing := rapid.SampledFrom([]error{nil, errDown, errDown, errNotFound}).Draw(t, "failing")
	m.mu.Lock()
	m.failing = failing
	m.mu.Unlock()
	m.logf("failing = %v", m.failing)
}

// ExpireAndFail moves the clock past a value's TTL and stale-while-
// revalidate window, within its stale-if-error window, and makes the
// dependency fail: the schedule most likely to serve a value stale in
// place of a failure.
func (m *cacheMachine) ExpireAndFail(t *rapid.T) {
	key := rapid.SampledFrom(keys).Draw(t, "key")
	e := m.model[key]
	if e == nil || e.err != nil || m.sie == 0 {
		t.Skip("no value that StaleIfError could serve")
	}
	if target := e.expires.Add(m.swr); m.clk.Now().Before(target) {
		m.clk.Advance(target.Sub(m.clk.Now()))
	}
	m.mu.Lock()
	m.failing = errDown
	m.mu.Unlock()
	m.logf("ExpireAndFail(%s)", key)
}

func (m *cacheMachine) Invalidate(t *rapid.T) {
	key := rapid.SampledFrom(keys).Draw(t, "key")
	m.c.Invalidate(context.Background(), key)
	m.drop(key)
	m.logf("Invalidate(%s)", key)
}

func (m *cacheMachine) Purge(t *rapid.T) {
	m.c.Purge(context.Background())
	clear(m.model)
	clear(m.used)
	m.recency = nil
	m.logf("Purge")
}

// Concurrent makes three callers miss one key at once: one load, and all
// three get its value.
func (m *cacheMachine) Concurrent(t *rapid.T) {
	key := rapid.SampledFrom(keys).Draw(t, "key")
	if m.failing != nil {
		t.Skip("a failing dependency: stale and negative answers are Get's")
	}
	m.c.Invalidate(context.Background(), key)
	m.drop(key)
	release := make(chan struct{})
	got := make(chan string, 3)
	for range 3 {
		go func() {
			v, _ := m.c.Policy().Do(cache.Key(context.Background(), key), m.op(t, key, release))
			got <- v
		}()
	}
	synctest.Wait()
	close(release)
	m.wantCalls++
	vs := []string{<-got, <-got, <-got}
	synctest.Wait()
	want := m.loaded(key, m.clk.Now())
	if diff := cmp.Diff([]string{want, want, want}, vs); diff != "" {
		m.fatalf(t, "concurrent callers mismatch (-want +got):\n%s", diff)
	}
	m.store(key, want, nil)
	m.cover.concurrent++
	m.logf("Concurrent(%s) = %q", key, want)
}

func (m *cacheMachine) Check(t *rapid.T) {
	if m.overlap.Load() {
		m.fatalf(t, "two loads of one key ran at once")
	}
	m.mu.Lock()
	calls := m.calls
	m.mu.Unlock()
	if calls != m.wantCalls {
		m.fatalf(t, "%d calls of the dependency, the model expects %d", calls, m.wantCalls)
	}
	if m.shared != nil {
		// The store keeps entries the cache found past their use; those
		// the model holds, it holds alike.
		for k, e := range m.model {
			se, ok := m.shared.Get(context.Background(), k)
			if !ok || se.Value != e.value || !se.Expires.Equal(e.expires) || !se.Discard.Equal(e.discard) {
				m.fatalf(t, "store entry of %q: %+v (%v), the model holds %+v", k, se, ok, *e)
			}
		}
		return
	}
	if got := m.c.Stats().Entries; got != len(m.model) {
		m.fatalf(t, "%d entries, the model holds %d (%v)", got, len(m.model), m.recency)
	}
}

// TestCacheAgainstModel checks the cache against a map with explicit
// time: the values, errors, staleness and outcomes of random calls under
// random expiries, failures and invalidations; that no value is returned
// past its longest stale window; that the dependency is called exactly
// when the model says, and never twice at once for one key.
func TestCacheAgainstModel(t *testing.T) {
	var cover coverage
	testwait.Bubble(t, func(t *testing.T) {
		// rapid asks a *testing.T for its deadline, which a bubble forbids;
		// wrapped, it is only a rapid.TB.
		rapid.Check(struct{ *testing.T }{t}, func(rt *rapid.T) {
			m := newCacheMachine(rt, &cover)
			rt.Repeat(map[string]func(*rapid.T){
				"Get": m.Get, "Get again": m.Get, "Get once more": m.Get, // calls weigh the most
				"Advance": m.Advance, "Advance again": m.Advance,
				"Fail":          m.Fail,
				"ExpireAndFail": m.ExpireAndFail,
				"Invalidate":    m.Invalidate,
				"Purge":         m.Purge,
				"Concurrent":    m.Concurrent,
				"":              m.Check,
			})
			synctest.Wait()
		})
	})
	t.Logf("coverage: %+v", cover)
	if !t.Failed() && (cover.swr == 0 || cover.sie == 0 || cover.negative == 0 || cover.evicted == 0 || cover.concurrent == 0 || cover.store == 0) {
		t.Errorf("the schedules never reached some cases: %+v", cover)
	}
}

// coverage counts the cases the schedules reached.
type coverage struct{ swr, sie, negative, evicted, concurrent, store int }
