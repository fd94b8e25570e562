package cache_test

import (
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/cache"
)

// Validate names the first invalid field, with New's message, and accepts
// every field at its smallest valid value (0 for the defaults, Off for
// LoadTimeout).
func TestConfigValidateEveryField(t *testing.T) {
	isNotFound := func(err error) bool { return errors.Is(err, errDown) }
	size := func(string) int64 { return 1 }
	store := &mapStore{m: map[string]cache.Entry[string]{}}
	for _, tc := range []struct {
		name string
		c    cache.Config
		want string
	}{
		{"zero", cache.Config{}, ""},
		{"smallest values", cache.Config{TTL: 1, MaxEntries: 1, MaxBytes: 1, Size: size, StaleWhileRevalidate: 1,
			StaleIfError: 1, MaxRefreshes: 1, LoadTimeout: 1, NegativeTTL: 1, NegativeIf: isNotFound}, ""},
		{"LoadTimeout off", cache.Config{LoadTimeout: resilience.Off}, ""},
		{"Store alone", cache.Config{Store: store}, ""},
		{"TTL", cache.Config{TTL: -time.Second}, "cache: TTL must be > 0, got -1s"},
		{"MaxEntries", cache.Config{MaxEntries: -1}, "cache: MaxEntries must be >= 1, got -1"},
		{"MaxBytes", cache.Config{MaxBytes: -1}, "cache: MaxBytes must be >= 1 (0: no bound), got -1"},
		{"MaxBytes without Size", cache.Config{MaxBytes: 1}, "cache: MaxBytes 1 needs a size function (WithSize)"},
		{"StaleWhileRevalidate", cache.Config{StaleWhileRevalidate: -2}, "cache: StaleWhileRevalidate must be >= 0 (0: off), got -2ns"},
		{"StaleIfError", cache.Config{StaleIfError: -time.Minute}, "cache: StaleIfError must be >= 0 (0: off), got -1m0s"},
		{"MaxRefreshes", cache.Config{MaxRefreshes: -3}, "cache: MaxRefreshes must be >= 1, got -3"},
		{"LoadTimeout", cache.Config{LoadTimeout: -2}, "cache: LoadTimeout must be > 0 or off, got -2ns"},
		{"NegativeTTL", cache.Config{NegativeTTL: -time.Second, NegativeIf: isNotFound}, "cache: NegativeTTL must be >= 0 (0: off), got -1s"},
		{"NegativeTTL without NegativeIf", cache.Config{NegativeTTL: time.Second}, "cache: NegativeTTL 1s needs NegativeIf (WithNegativeIf)"},
		{"NegativeTTL 1ns without NegativeIf", cache.Config{NegativeTTL: 1}, "cache: NegativeTTL 1ns needs NegativeIf (WithNegativeIf)"},
		{"NegativeIf without NegativeTTL", cache.Config{NegativeIf: isNotFound}, "cache: NegativeIf needs NegativeTTL > 0 (WithNegativeTTL)"},
		{"Store with MaxEntries", cache.Config{Store: store, MaxEntries: 1}, "cache: MaxEntries and MaxBytes bound the in-memory store; a Store (WithStore) bounds itself"},
		{"Store with MaxBytes", cache.Config{Store: store, MaxBytes: 1, Size: size}, "cache: MaxEntries and MaxBytes bound the in-memory store; a Store (WithStore) bounds itself"},
		{"first invalid field", cache.Config{TTL: -1, MaxEntries: -1}, "cache: TTL must be > 0, got off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ""
			if err := tc.c.Validate(); err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Fatalf("Validate() = %q, want %q", got, tc.want)
			}
		})
	}
}

// New panics with Validate's message.
func TestNewPanicsWithValidatesMessage(t *testing.T) {
	defer func() {
		const want = "cache: StaleIfError must be >= 0 (0: off), got -1s"
		if r := recover(); r != want {
			t.Fatalf("panic %v, want %q", r, want)
		}
	}()
	cache.New[string](time.Minute, cache.WithConfig(cache.Config{MaxEntries: 1}), cache.WithConfig(cache.Config{StaleIfError: -time.Second}))
}

// The options accept their smallest valid argument (and LoadTimeout Off),
// and panic just below it, naming themselves and the value.
func TestOptionsBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func() cache.Option
		want string // "" for no panic
	}{
		{"WithMaxEntries(1)", func() cache.Option { return cache.WithMaxEntries(1) }, ""},
		{"WithMaxEntries(-1)", func() cache.Option { return cache.WithMaxEntries(-1) }, "cache: WithMaxEntries(-1): the bound must be >= 1; leave the option out for 10000"},
		{"WithMaxBytes(1)", func() cache.Option { return cache.WithMaxBytes(1) }, ""},
		{"WithMaxBytes(0)", func() cache.Option { return cache.WithMaxBytes(0) }, "cache: WithMaxBytes(0): the bound must be >= 1; leave the option out for no bound"},
		{"WithMaxRefreshes(1)", func() cache.Option { return cache.WithMaxRefreshes(1) }, ""},
		{"WithMaxRefreshes(-1)", func() cache.Option { return cache.WithMaxRefreshes(-1) }, "cache: WithMaxRefreshes(-1): the bound must be >= 1; leave the option out for 16"},
		{"WithStaleWhileRevalidate(1ns)", func() cache.Option { return cache.WithStaleWhileRevalidate(1) }, ""},
		{"WithStaleWhileRevalidate(-2ns)", func() cache.Option { return cache.WithStaleWhileRevalidate(-2) }, "cache: WithStaleWhileRevalidate(-2ns): the window must be > 0; leave the option out to keep it off"},
		{"WithStaleIfError(1ns)", func() cache.Option { return cache.WithStaleIfError(1) }, ""},
		{"WithStaleIfError(0)", func() cache.Option { return cache.WithStaleIfError(0) }, "cache: WithStaleIfError(0s): the window must be > 0; leave the option out to keep it off"},
		{"WithNegativeTTL(1ns)", func() cache.Option { return cache.WithNegativeTTL(1) }, ""},
		{"WithNegativeTTL(-1s)", func() cache.Option { return cache.WithNegativeTTL(-time.Second) }, "cache: WithNegativeTTL(-1s): the TTL must be > 0; leave the option out to cache no error"},
		{"WithLoadTimeout(1ns)", func() cache.Option { return cache.WithLoadTimeout(1) }, ""},
		{"WithLoadTimeout(Off)", func() cache.Option { return cache.WithLoadTimeout(resilience.Off) }, ""},
		{"WithLoadTimeout(0)", func() cache.Option { return cache.WithLoadTimeout(0) }, "cache: WithLoadTimeout(0s): the bound must be > 0, or resilience.Off for none; leave the option out for 30s"},
		{"WithLoadTimeout(-2ns)", func() cache.Option { return cache.WithLoadTimeout(-2) }, "cache: WithLoadTimeout(-2ns): the bound must be > 0, or resilience.Off for none; leave the option out for 30s"},
		{"WithStore(nil)", func() cache.Option { return cache.WithStore[string](nil) }, "cache: WithStore(nil): the store must not be nil"},
		{"WithClock(nil)", func() cache.Option { return cache.WithClock(nil) }, "cache: WithClock(nil): the clock must not be nil; leave the option out for clock.Real()"},
		{"WithName invalid", func() cache.Option { return cache.WithName("a\xff") }, "cache: WithName"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if tc.want == "" {
					if r != nil {
						t.Fatalf("panic %v, want none", r)
					}
					return
				}
				s, _ := r.(string)
				if len(s) < len(tc.want) || s[:len(tc.want)] != tc.want {
					t.Fatalf("panic %v, want one starting %q", r, tc.want)
				}
			}()
			if o := tc.f(); o == nil {
				t.Fatal("nil option")
			}
		})
	}
}

// WithStore for another type than the cache's panics at New, naming both.
func TestWithStoreOfAnotherTypePanics(t *testing.T) {
	defer func() {
		const want = "cache: WithStore: the store is a *cache_test.mapStore, the cache holds int: it must be a Store[int]"
		if r := recover(); r != want {
			t.Fatalf("panic %v, want %q", r, want)
		}
	}()
	cache.New[int](time.Minute, cache.WithStore[string](&mapStore{m: map[string]cache.Entry[string]{}}))
}

// The layer and String name the cache: "cache", or "cache(Name)".
func TestLayerName(t *testing.T) {
	for _, tc := range []struct {
		opts []cache.Option
		want string
	}{
		{nil, "cache"},
		{[]cache.Option{cache.WithName("users")}, "cache(users)"},
		{[]cache.Option{cache.WithConfig(cache.Config{Name: "ids"})}, "cache(ids)"},
	} {
		c := cache.New[string](time.Minute, tc.opts...)
		if got := c.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
		if got := c.Policy().String(); got != tc.want {
			t.Errorf("Policy().String() = %q, want %q", got, tc.want)
		}
	}
}
