package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterTimeout bounds the wait for a created cluster to be ok on every
// node.
const clusterTimeout = 20 * time.Second

// Cluster is a Redis Cluster of six redis-server processes that a test
// started on 127.0.0.1: three primaries, each with one replica.
type Cluster struct {
	// Nodes are the servers, in the order given to redis-cli --cluster
	// create: it makes the first three the primaries.
	Nodes []*Server
}

// StartCluster starts a six-node Redis Cluster for tb (three primaries and
// three replicas, each node on free loopback ports for its clients and
// its cluster bus, in a temporary directory, with no persistence), waits
// until every node reports cluster_state:ok and every replica is in sync
// with its primary (at most 20s), and stops every
// node when tb ends. config is more configuration for every node, as
// pairs ("--cluster-node-timeout", "1000"); the node timeout is 2000 ms
// unless config sets it. Without redis-server or redis-cli, StartCluster
// fails tb when CI=true and skips it otherwise.
func StartCluster(tb testing.TB, config ...string) *Cluster {
	tb.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") == "true" {
				tb.Fatal("redistest: " + bin + " is not installed (CI=true): " + Install)
			}
			tb.Skip("redistest: this test needs a real " + bin + ", which is not installed: " + Install)
		}
	}
	base := tb.TempDir()
	c := &Cluster{}
	tb.Cleanup(func() {
		for _, n := range c.Nodes {
			n.Stop()
		}
	})
	conf := append([]string{"--cluster-enabled", "yes", "--cluster-node-timeout", "2000",
		"--cluster-replica-validity-factor", "0", "--appendonly", "no", "--save", "",
		"--repl-diskless-sync-delay", "0"}, config...)
	for i := range 6 {
		dir := filepath.Join(base, strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			tb.Fatal(err)
		}
		n, err := startNode(dir, conf)
		if err != nil {
			tb.Fatal(err)
		}
		c.Nodes = append(c.Nodes, n)
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr)
	}
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		tb.Fatalf("redistest: redis-cli --cluster create: %v: %s", err, out)
	}
	c.WaitOK(tb, clusterTimeout)
	return c
}

// startNode starts a cluster node in dir on two free ports, its clients'
// and its bus's.
func startNode(dir string, conf []string) (*Server, error) {
	var last error
	for range 3 { // a port taken between freePort and the server's bind
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		bus, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("redistest: %w", err)
		}
		s := &Server{Addr: "127.0.0.1:" + strconv.Itoa(port), port: port, dir: dir,
			config: append(append([]string{}, conf...), "--cluster-port", strconv.Itoa(bus))}
		if last = s.launch(); last == nil {
			return s, nil
		}
	}
	return nil, last
}

// Addrs returns the nodes' addresses.
func (c *Cluster) Addrs() []string {
	var a []string
	for _, n := range c.Nodes {
		a = append(a, n.Addr)
	}
	return a
}

// WaitOK waits, at most within, until every node that is running reports
// cluster_state:ok and the same owner of every slot range, and every
// replica's link to its primary is up, and fails tb if they do not.
func (c *Cluster) WaitOK(tb testing.TB, within time.Duration) {
	tb.Helper()
	Eventually(tb, within, "redistest: cluster ok on every node", func() (bool, string) {
		var first string
		for _, n := range c.Nodes {
			if !n.running() {
				continue
			}
			info, err := c.Do(n.Addr, "CLUSTER", "INFO")
			if err != nil {
				return false, n.Addr + ": " + err.Error()
			}
			if !strings.Contains(fmt.Sprint(info), "cluster_state:ok") {
				return false, n.Addr + ": " + fmt.Sprint(info)
			}
			repl, err := c.Do(n.Addr, "INFO", "replication")
			if err != nil {
				return false, n.Addr + ": " + err.Error()
			}
			if r := fmt.Sprint(repl); strings.Contains(r, "role:slave") && !strings.Contains(r, "master_link_status:up") {
				return false, n.Addr + ": replica not in sync: " + r
			}
			slots, err := c.Do(n.Addr, "CLUSTER", "SHARDS")
			if err != nil {
				return false, n.Addr + ": " + err.Error()
			}
			s := primaries(slots)
			if first == "" {
				first = s
			} else if s != first {
				return false, "the nodes disagree on the primaries: " + first + " and " + s
			}
		}
		return true, ""
	})
}

// primaries returns the slot ranges and their primaries (addresses) of a
// CLUSTER SHARDS reply, as text: the part of the view the nodes must agree
// on.
func primaries(v any) string {
	var out []string
	shards, _ := v.([]any)
	for _, sh := range shards {
		m := asMap(sh)
		var owner string
		nodes, _ := m["nodes"].([]any)
		for _, nd := range nodes {
			nm := asMap(nd)
			if nm["role"] == "master" && nm["health"] == "online" {
				owner = fmt.Sprint(nm["ip"], ":", nm["port"])
			}
		}
		out = append(out, fmt.Sprint(m["slots"], owner))
	}
	sortStrings(out)
	return strings.Join(out, " ")
}

func asMap(v any) map[string]any {
	m := map[string]any{}
	switch x := v.(type) {
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			m[fmt.Sprint(x[i])] = x[i+1]
		}
	case map[any]any:
		for k, e := range x {
			m[fmt.Sprint(k)] = e
		}
	}
	return m
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Do runs one command on the node at addr (not following redirections)
// and returns its reply, waiting at most 2s.
func (c *Cluster) Do(addr string, args ...any) (any, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second,
		ReadTimeout: 2 * time.Second, WriteTimeout: time.Second, Protocol: 2})
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return rdb.Do(ctx, args...).Result()
}

// running reports whether the server's process has not exited.
func (s *Server) running() bool {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}
