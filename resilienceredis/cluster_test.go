package resilienceredis

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// node is a line of CLUSTER NODES.
type node struct {
	id, addr string
	primary  bool
	failed   bool
	slots    [][2]int64
}

// clusterNodes returns the cluster's nodes as a running node sees them.
func clusterNodes(t *testing.T, c *redistest.Cluster) []node {
	t.Helper()
	var last error
	for _, n := range c.Nodes {
		v, err := c.Do(n.Addr, "CLUSTER", "NODES")
		if err != nil {
			last = err
			continue
		}
		var out []node
		for _, line := range strings.Split(strings.TrimSpace(fmt.Sprint(v)), "\n") {
			f := strings.Fields(line)
			if len(f) < 8 {
				continue
			}
			x := node{id: f[0], addr: strings.Split(f[1], "@")[0], primary: strings.Contains(f[2], "master"), failed: strings.Contains(f[2], "fail")}
			for _, r := range f[8:] {
				if strings.HasPrefix(r, "[") {
					continue // a slot being moved
				}
				lo, hi, ok := strings.Cut(r, "-")
				a, _ := strconv.ParseInt(lo, 10, 64)
				z := a
				if ok {
					z, _ = strconv.ParseInt(hi, 10, 64)
				}
				x.slots = append(x.slots, [2]int64{a, z})
			}
			out = append(out, x)
		}
		return out
	}
	t.Fatalf("no node answered CLUSTER NODES: %v", last)
	return nil
}

// owner returns the primary that serves slot.
func owner(nodes []node, slot int64) (node, bool) {
	for _, n := range nodes {
		for _, r := range n.slots {
			if n.primary && !n.failed && r[0] <= slot && slot <= r[1] {
				return n, true
			}
		}
	}
	return node{}, false
}

// keySlot returns the slot of key.
func keySlot(t *testing.T, c *redistest.Cluster, key string) int64 {
	t.Helper()
	v, err := c.Do(c.Nodes[0].Addr, "CLUSTER", "KEYSLOT", key)
	if err != nil {
		t.Fatal(err)
	}
	return v.(int64)
}

// moveSlot moves slot from its primary to another, as a resharding does:
// IMPORTING on the target, MIGRATING on the source, then its keys one at
// a time, pause between each (the calls meanwhile meet a slot half
// moved), then the slot's new owner to every primary. It returns the
// number of keys moved.
func moveSlot(t *testing.T, c *redistest.Cluster, slot int64, pause time.Duration) int {
	t.Helper()
	nodes := clusterNodes(t, c)
	src, ok := owner(nodes, slot)
	if !ok {
		t.Fatalf("no primary serves slot %d", slot)
	}
	var dst node
	for _, n := range nodes {
		if n.primary && !n.failed && n.id != src.id {
			dst = n
			break
		}
	}
	do := func(addr string, args ...any) any {
		t.Helper()
		v, err := c.Do(addr, args...)
		if err != nil {
			t.Fatalf("%s %v: %v", addr, args, err)
		}
		return v
	}
	do(dst.addr, "CLUSTER", "SETSLOT", slot, "IMPORTING", src.id)
	do(src.addr, "CLUSTER", "SETSLOT", slot, "MIGRATING", dst.id)
	host, port, _ := strings.Cut(dst.addr, ":")
	moved := 0
	for range 100 {
		keys, _ := do(src.addr, "CLUSTER", "GETKEYSINSLOT", slot, 1).([]any)
		if len(keys) == 0 {
			break
		}
		do(src.addr, "MIGRATE", host, port, "", 0, 5000, "KEYS", keys[0])
		moved++
		time.Sleep(pause)
	}
	// The target first, then the source: a source that says MOVED while
	// the target still only imports would send clients back and forth.
	do(dst.addr, "CLUSTER", "SETSLOT", slot, "NODE", dst.id)
	do(src.addr, "CLUSTER", "SETSLOT", slot, "NODE", dst.id)
	for _, n := range nodes {
		if n.primary && !n.failed && n.id != src.id && n.id != dst.id {
			do(n.addr, "CLUSTER", "SETSLOT", slot, "NODE", dst.id)
		}
	}
	return moved
}

// The slot of a breaker's and a limiter's keys moves to another primary,
// key by key, while instances call them. The breaker's scripts are of one
// key, so no round trip meets a slot with part of its keys moved
// (TRYAGAIN): every instance stays on the shared state and every failure
// injected during the move is in the shared counts. The limiter's
// decisions stay shared, and the fleet admits at most Burst + Rate·elapsed.
func TestClusterReshardUnderLoad(t *testing.T) {
	c := redistest.StartCluster(t)
	ctx, prefix := ctxFor(t), testPrefix(t)
	const rate, burst = 200, 20
	var bs []*Breaker
	var ls []*Limiter
	for range 3 {
		rdb := clusterClient(t, c)
		b := NewBreaker(rdb, "svc", WithPrefix(prefix), WithThreshold(1<<30), WithWindowDuration(time.Minute),
			WithFlushInterval(10*time.Millisecond), WithTimeout(time.Second))
		t.Cleanup(func() { b.Close() })
		bs = append(bs, b)
		ls = append(ls, NewLimiter(rdb, "svc", rate, burst, WithPrefix(prefix), WithTimeout(time.Second)))
	}
	redistest.Eventually(t, 5*time.Second, "every breaker learnt the state", func() (bool, string) {
		for i, b := range bs {
			if viewGen(b.word.Load()) == 0 {
				return false, "instance " + strconv.Itoa(i)
			}
		}
		return true, ""
	})
	slot := keySlot(t, c, bs[0].keys[0])
	if s := keySlot(t, c, ls[0].keys[0]); s != slot {
		t.Fatalf("the limiter's key is in slot %d, the breaker's in %d", s, slot)
	}
	stop := make(chan struct{})
	var failures, admitted atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 3 {
		wg.Go(func() {
			for k := 0; k < 5000; k++ {
				select {
				case <-stop:
					return
				default:
				}
				if fail(bs[i]) == nil {
					failures.Add(1)
				}
				time.Sleep(2 * time.Millisecond)
			}
		})
		wg.Go(func() {
			for k := 0; k < 5000; k++ {
				select {
				case <-stop:
					return
				default:
				}
				if ls[i].Allow(ctx) {
					admitted.Add(1)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
	time.Sleep(100 * time.Millisecond)
	moved := moveSlot(t, c, slot, 150*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	elapsed := time.Since(start)
	if moved < 3 {
		t.Errorf("%d keys moved, want the breaker's and the limiter's", moved)
	}
	// The breakers' last batches reach Redis within a few flushes.
	want := failures.Load()
	var got SharedState
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var err error
		if got, err = bs[0].Shared(ctx); err == nil && got.Failures == want && got.ConsecutiveFailures == want {
			break
		}
	}
	if got.Failures != want || got.ConsecutiveFailures != want {
		t.Errorf("shared counts after the move: %d failures in the window, %d consecutive; want every failure made, %d", got.Failures, got.ConsecutiveFailures, want)
	}
	for i, b := range bs {
		b.batch.mu.Lock()
		sent, dropped, bad := b.batch.sent, b.batch.dropped, b.batch.bad
		b.batch.mu.Unlock()
		if dropped != 0 || bad != 0 || b.localN.Load() != 0 || viewDown(b.word.Load()) {
			t.Errorf("breaker %d: %d outcomes sent, %d dropped, %d fenced, %d local decisions, down %v; want none but sent: %v",
				i, sent, dropped, bad, b.localN.Load(), viewDown(b.word.Load()), b.why.Load())
		}
	}
	bound := burst + int64(rate*elapsed.Seconds()) + 1
	for i, l := range ls {
		if n := l.p.localN.Load(); n != 0 {
			t.Errorf("limiter %d made %d local decisions during the move (%v), want none", i, n, l.p.why())
		}
	}
	if a := admitted.Load(); a > bound {
		t.Errorf("the fleet admitted %d in %v, above Burst + Rate·elapsed = %d", a, elapsed, bound)
	}
	t.Logf("%d keys moved; %d failures, all counted; limiter admitted %d in %v (bound %d)", moved, want, admitted.Load(), elapsed, bound)
}
