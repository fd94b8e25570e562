package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/cache"
	"github.com/f0b5b96b/resilience/policy/retry"
)

// A cache outermost in a pipeline: a hit never reaches the retry below.
func ExampleCache_Policy() {
	users := cache.New[string](time.Minute, cache.WithName("users"))
	p := users.Policy().Then(retry.New[string]())
	calls := 0
	fetch := func(ctx context.Context) (string, error) {
		calls++
		return "Ada", nil
	}
	ctx := cache.Key(context.Background(), "user:1")
	for range 3 {
		v, err := p.Do(ctx, fetch)
		fmt.Println(v, err)
	}
	fmt.Println("calls:", calls, "layers:", p)
	// Output:
	// Ada <nil>
	// Ada <nil>
	// Ada <nil>
	// calls: 1 layers: cache(users) > retry
}

func ExampleNew() {
	c := cache.New[[]byte](5*time.Minute,
		cache.WithMaxEntries(1000),
		cache.WithMaxBytes(1<<20),
		cache.WithSize(func(b []byte) int64 { return int64(len(b)) }),
		cache.WithStaleIfError(time.Hour),
	)
	fmt.Println(c)
	// Output: cache
}

// Guard takes the key from the function's argument.
func ExampleGuard() {
	c := cache.New[string](time.Minute)
	getUser := cache.Guard(c, strconv.Itoa, func(ctx context.Context, id int) (string, error) {
		fmt.Println("fetching", id)
		return "user " + strconv.Itoa(id), nil
	})
	v, _ := getUser(context.Background(), 7)
	v2, _ := getUser(context.Background(), 7)
	fmt.Println(v, v2)
	// Output:
	// fetching 7
	// user 7 user 7
}

func ExampleKey() {
	c := cache.New[int](time.Minute)
	ctx := cache.Key(context.Background(), "answer")
	v, _ := c.Policy().Do(ctx, func(context.Context) (int, error) { return 42, nil })
	fmt.Println(cache.KeyOf(ctx), v)
	// Output: answer 42
}

// WithKey finds the key in values the request already carries.
func ExampleWithKey() {
	type tenantKey struct{}
	c := cache.New[string](time.Minute, cache.WithKey(func(ctx context.Context) string {
		t, _ := ctx.Value(tenantKey{}).(string)
		return "plan:" + t
	}))
	ctx := context.WithValue(context.Background(), tenantKey{}, "acme")
	v, _ := c.Policy().Do(ctx, func(context.Context) (string, error) { return "gold", nil })
	fmt.Println(v)
	// Output: gold
}

// A failed load is replaced by the last good value, marked stale.
func ExampleWithStaleIfError() {
	clk := clock.NewFake()
	c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleIfError(time.Hour))
	p := c.Policy()
	ok := func(context.Context) (string, error) { return "v1", nil }
	down := func(context.Context) (string, error) { return "", errors.New("down") }

	_, _ = p.Do(cache.Key(context.Background(), "k"), ok)
	clk.Advance(time.Minute)
	ctx, info := cache.WithInfo(cache.Key(context.Background(), "k"))
	v, err := p.Do(ctx, down)
	fmt.Println(v, err, cache.WasStale(ctx), info.Age, info.Err)
	// Output: v1 <nil> true 59s down
}

// Past its TTL, a value is served at once while one refresh runs behind.
func ExampleWithStaleWhileRevalidate() {
	clk := clock.NewFake()
	c := cache.New[string](time.Second, cache.WithClock(clk), cache.WithStaleWhileRevalidate(time.Minute))
	p := c.Policy()
	_, _ = p.Do(cache.Key(context.Background(), "k"), func(context.Context) (string, error) { return "old", nil })
	clk.Advance(2 * time.Second)
	ctx, info := cache.WithInfo(cache.Key(context.Background(), "k"))
	v, _ := p.Do(ctx, func(context.Context) (string, error) { return "new", nil })
	fmt.Println(v, info.Outcome, info.Stale)
	// Output: old hit true
}

func ExampleWithInfo() {
	c := cache.New[int](time.Minute)
	for range 2 {
		ctx, info := cache.WithInfo(cache.Key(context.Background(), "k"))
		_, _ = c.Policy().Do(ctx, func(context.Context) (int, error) { return 1, nil })
		fmt.Println(info.Outcome)
	}
	// Output:
	// miss
	// hit
}

// "Not found" is cached for a short time, so a missing key does not reach
// the dependency on every call.
func ExampleWithNegativeTTL() {
	errNotFound := errors.New("not found")
	c := cache.New[string](time.Minute,
		cache.WithNegativeTTL(5*time.Second), cache.WithNegativeIf(func(err error) bool { return errors.Is(err, errNotFound) }))
	calls := 0
	get := cache.Guard(c, func(id string) string { return id }, func(context.Context, string) (string, error) {
		calls++
		return "", errNotFound
	})
	_, err1 := get(context.Background(), "ghost")
	_, err2 := get(context.Background(), "ghost")
	fmt.Println(err1, err2, calls)
	// Output: not found not found 1
}

func ExampleCache_Invalidate() {
	c := cache.New[int](time.Minute)
	n := 0
	get := cache.Guard(c, func(k string) string { return k }, func(context.Context, string) (int, error) { n++; return n, nil })
	a, _ := get(context.Background(), "k")
	c.Invalidate(context.Background(), "k")
	b, _ := get(context.Background(), "k")
	fmt.Println(a, b)
	// Output: 1 2
}

func ExampleCache_Purge() {
	c := cache.New[int](time.Minute)
	get := cache.Guard(c, func(k string) string { return k }, func(context.Context, string) (int, error) { return 1, nil })
	_, _ = get(context.Background(), "a")
	_, _ = get(context.Background(), "b")
	c.Purge(context.Background())
	fmt.Println(c.Stats().Entries)
	// Output: 0
}

func ExampleCache_Stats() {
	c := cache.New[int](time.Minute)
	get := cache.Guard(c, func(k string) string { return k }, func(context.Context, string) (int, error) { return 1, nil })
	for range 3 {
		_, _ = get(context.Background(), "k")
	}
	s := c.Stats()
	fmt.Println(s.Hits, s.Misses, s.Entries)
	// Output: 2 1 1
}

func ExampleConfig() {
	var cfg cache.Config
	if err := json.Unmarshal([]byte(`{"MaxEntries": 500, "StaleIfError": "10m", "LoadTimeout": "off"}`), &cfg); err != nil {
		panic(err)
	}
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	c := cache.New[string](time.Minute, cache.WithConfig(cfg))
	fmt.Println(cfg.MaxEntries, cfg.StaleIfError, cfg.LoadTimeout == resilience.Off, c)
	// Output: 500 10m0s true cache
}

// Two caches share one store: what one loads, the other serves.
func ExampleWithStore() {
	shared := &mapStore{m: map[string]cache.Entry[string]{}}
	a := cache.New[string](time.Minute, cache.WithStore[string](shared))
	b := cache.New[string](time.Minute, cache.WithStore[string](shared))
	_, _ = a.Policy().Do(cache.Key(context.Background(), "k"), func(context.Context) (string, error) { return "from a", nil })
	ctx, info := cache.WithInfo(cache.Key(context.Background(), "k"))
	v, _ := b.Policy().Do(ctx, func(context.Context) (string, error) { return "from b", nil })
	fmt.Println(v, info.Outcome)
	// Output: from a hit
}
