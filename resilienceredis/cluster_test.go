package resilienceredis

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/resilienceredis/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// clusterClient returns a client of cluster c with go-redis's default
// options, closed when t ends.
func clusterClient(t testing.TB, c *redistest.Cluster) *redis.ClusterClient {
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs()})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// The fleet tests, each through a plain client of one server and through
// a client of a six-node Redis Cluster: the limiter admits exactly its
// burst of concurrent calls over four instances, a keyed limiter keeps a
// bucket per tenant across instances, and a breaker trips on the
// failures of three instances together and every instance learns it.
func TestFleetOnPlainAndCluster(t *testing.T) {
	c := redistest.StartCluster(t)
	for _, tc := range []struct {
		name   string
		client func(t *testing.T) redis.UniversalClient
	}{
		{"plain", func(t *testing.T) redis.UniversalClient { return newClient(t) }},
		{"cluster", func(t *testing.T) redis.UniversalClient { return clusterClient(t, c) }},
	} {
		t.Run(tc.name+"/limiter", func(t *testing.T) {
			ctx, prefix := ctxFor(t), testPrefix(t)
			var ls []*Limiter
			for range 4 {
				ls = append(ls, NewLimiter(tc.client(t), "fleet", slow, 10, WithPrefix(prefix), WithTimeout(5*time.Second)))
			}
			var passed atomic.Int64
			var wg sync.WaitGroup
			for i := range 40 {
				wg.Go(func() {
					if ls[i%4].Allow(ctx) {
						passed.Add(1)
					}
				})
			}
			wg.Wait()
			if got := passed.Load(); got != 10 {
				t.Errorf("%d of 40 calls over 4 instances passed, want the burst, 10", got)
			}
			for _, l := range ls {
				if s := l.p.sharedN.Load(); s != 10 {
					t.Errorf("an instance made %d decisions on the shared bucket, want all its 10", s)
				}
			}
		})
		t.Run(tc.name+"/keyed", func(t *testing.T) {
			ctx, prefix := ctxFor(t), testPrefix(t)
			a := NewKeyedLimiter(tc.client(t), "tenants", slow, 2, WithPrefix(prefix), WithTimeout(5*time.Second))
			b := NewKeyedLimiter(tc.client(t), "tenants", slow, 2, WithPrefix(prefix), WithTimeout(5*time.Second))
			var got []bool
			for _, x := range []struct {
				k   *KeyedLimiter
				key string
			}{{a, "t1"}, {b, "t1"}, {a, "t1"}, {b, "t2}"}, {a, "t2}"}, {b, "t2}"}, {a, "{t1}"}} {
				got = append(got, x.k.Allow(ctx, x.key))
			}
			if want := []bool{true, true, false, true, true, false, true}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("tenants t1, t2}, {t1} (burst 2) over two instances: %v, want %v", got, want)
			}
		})
		t.Run(tc.name+"/breaker", func(t *testing.T) {
			prefix := testPrefix(t)
			var inst []*Breaker
			for range 3 {
				b := NewBreaker(tc.client(t), "svc", WithPrefix(prefix), WithThreshold(6), WithCooldown(time.Hour),
					WithFlushInterval(10*time.Millisecond), WithTimeout(5*time.Second))
				t.Cleanup(func() { b.Close() })
				inst = append(inst, b)
			}
			redistest.Eventually(t, 5*time.Second, "every instance learnt the state", func() (bool, string) {
				for i, b := range inst {
					if viewGen(b.word.Load()) == 0 {
						return false, "instance " + strconv.Itoa(i)
					}
				}
				return true, ""
			})
			for _, b := range inst {
				for range 2 {
					if err := fail(b); err != nil {
						t.Fatal(err)
					}
				}
			}
			redistest.Eventually(t, 5*time.Second, "every instance open after 6 failures over 3 instances", func() (bool, string) {
				for i, b := range inst {
					if s := b.State(); s != breaker.Open {
						return false, "instance " + strconv.Itoa(i) + " " + s.String()
					}
				}
				return true, ""
			})
		})
	}
}

// A keyed limiter's tenants spread over the cluster's three primaries by
// their keys' slots, and a tenant's braces do not choose the slot: 100
// tenants "t}0", "t}1", ... are not all in the slot of "t".
func TestClusterKeyedLimiterSpreadsTenants(t *testing.T) {
	c := redistest.StartCluster(t)
	ctx, prefix := ctxFor(t), testPrefix(t)
	rdb := clusterClient(t, c)
	k := NewKeyedLimiter(rdb, "spread", slow, 1, WithPrefix(prefix), WithTimeout(5*time.Second))
	for i := range 300 {
		if !k.Allow(ctx, "tenant-"+strconv.Itoa(i)) {
			t.Fatalf("tenant %d's first call refused", i)
		}
	}
	var mu sync.Mutex
	perPrimary := map[string]int{}
	err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		keys, err := m.Keys(ctx, prefix+"rl:spread:*:{*").Result()
		mu.Lock()
		perPrimary[m.Options().Addr] = len(keys)
		mu.Unlock()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range perPrimary {
		total += n
	}
	if len(perPrimary) != 3 || total != 300 {
		t.Fatalf("tenants' keys per primary %v: want 300 over 3 primaries", perPrimary)
	}
	for addr, n := range perPrimary {
		if n < 60 {
			t.Errorf("primary %s holds %d of 300 tenants, want at least 60 (about a third): %v", addr, n, perPrimary)
		}
	}
	slots := map[int64]bool{}
	for i := range 100 {
		slot, err := rdb.ClusterKeySlot(ctx, k.Limiter("t}" + strconv.Itoa(i)).keys[0]).Result()
		if err != nil {
			t.Fatal(err)
		}
		slots[slot] = true
	}
	if len(slots) < 90 {
		t.Errorf("100 tenants named \"t}N\" fall in %d slots, want at least 90: the braces steer the slot", len(slots))
	}
	t.Logf("tenants per primary %v; 100 braced tenants in %d slots", perPrimary, len(slots))
}
