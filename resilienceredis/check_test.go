package resilienceredis_test

import (
	"fmt"
	"testing"

	"github.com/f0b5b96b/resilience/resilienceredis"
	"github.com/redis/go-redis/v9"
)

// Every constructor checks its client, its name and its options with one
// rule, and panics at construction with a message that names the
// constructor and the argument: a nil client and a typed nil (a nil
// *redis.Client in the interface) alike, a name that is empty, not valid
// UTF-8 or holds a brace, a nil option.
func TestConstructorsCheckArguments(t *testing.T) {
	// A client of an address nobody listens on: no constructor asks Redis.
	live := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer live.Close()
	var nilClient *redis.Client
	var nilCluster *redis.ClusterClient
	ctors := map[string]func(rdb redis.UniversalClient, name string, nilOpt bool){
		"NewLimiter": func(rdb redis.UniversalClient, name string, nilOpt bool) {
			opts := []resilienceredis.LimiterOption{nil}[:b2i(nilOpt)]
			resilienceredis.NewLimiter(rdb, name, 1, 1, opts...)
		},
		"NewKeyedLimiter": func(rdb redis.UniversalClient, name string, nilOpt bool) {
			opts := []resilienceredis.LimiterOption{nil}[:b2i(nilOpt)]
			resilienceredis.NewKeyedLimiter(rdb, name, 1, 1, opts...)
		},
		"NewBreaker": func(rdb redis.UniversalClient, name string, nilOpt bool) {
			opts := []resilienceredis.BreakerOption{nil}[:b2i(nilOpt)]
			resilienceredis.NewBreaker(rdb, name, opts...).Close()
		},
		"NewRetryBudget": func(rdb redis.UniversalClient, name string, nilOpt bool) {
			opts := []resilienceredis.RetryBudgetOption{nil}[:b2i(nilOpt)]
			resilienceredis.NewRetryBudget(rdb, name, opts...).Close()
		},
		"NewCacheStore": func(rdb redis.UniversalClient, name string, nilOpt bool) {
			opts := []resilienceredis.CacheStoreOption{nil}[:b2i(nilOpt)]
			resilienceredis.NewCacheStore[int](rdb, name, nil, opts...)
		},
	}
	cases := []struct {
		name   string
		rdb    redis.UniversalClient
		arg    string
		nilOpt bool
		want   string // %[1]s is the constructor
	}{
		{"valid", live, "ok", false, ""},
		{"nil client", nil, "ok", false, "resilienceredis: %[1]s(rdb, ...): rdb must not be nil"},
		{"nil *redis.Client", nilClient, "ok", false, "resilienceredis: %[1]s(rdb, ...): rdb must not be nil, got a nil *redis.Client"},
		{"nil *redis.ClusterClient", nilCluster, "ok", false, "resilienceredis: %[1]s(rdb, ...): rdb must not be nil, got a nil *redis.ClusterClient"},
		{"empty name", live, "", false, `resilienceredis: %[1]s(rdb, "", ...): name must not be empty`},
		{"name not UTF-8", live, "a\xff", false, `resilienceredis: %[1]s(rdb, "a\xff", ...): name must be valid UTF-8`},
		{"name with brace", live, "a{b", false, `resilienceredis: %[1]s(rdb, "a{b", ...): name must hold no '{' or '}'`},
		{"nil option", live, "ok", true, "resilienceredis: %[1]s: option 0 must not be nil"},
	}
	for ctor, build := range ctors {
		for _, c := range cases {
			t.Run(ctor+"/"+c.name, func(t *testing.T) {
				want := ""
				if c.want != "" {
					want = fmt.Sprintf(c.want, ctor)
				}
				got := ""
				func() {
					defer func() {
						if r := recover(); r != nil {
							got = fmt.Sprint(r)
						}
					}()
					build(c.rdb, c.arg, c.nilOpt)
				}()
				if got != want {
					t.Errorf("%s panicked with %q, want %q", ctor, got, want)
				}
			})
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
