package redistest

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// StartCluster starts six nodes on loopback, each in a directory of its
// own with no persistence and a node timeout of 2000 ms: the first three
// primaries, each of the others a replica of one of them, and Addrs
// lists them in that order. It returns once every node reports an ok
// cluster and every replica is in sync, and stops every node when the
// test ends.
func TestStartCluster(t *testing.T) {
	defer notSkipped(t, "redis-server", "redis-cli")
	var c *Cluster
	t.Run("running", func(t *testing.T) {
		c = StartCluster(t)
		checkCluster(t, c)
	})
	if c == nil {
		return
	}
	for i, n := range c.Nodes {
		if n.running() || Ping(n.Addr, time.Second) == nil {
			t.Errorf("node %d runs after its test ended", i)
		}
	}
}

// checkCluster checks a cluster that StartCluster has just returned.
func checkCluster(t *testing.T, c *Cluster) {
	t.Helper()
	for i, n := range c.Nodes {
		info, err := c.Do(n.Addr, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(fmt.Sprint(info), "cluster_state:ok") {
			t.Errorf("node %d just after StartCluster: %v %v, want cluster_state:ok", i, info, err)
		}
		repl, err := c.Do(n.Addr, "INFO", "replication")
		if r := fmt.Sprint(repl); err != nil || i >= 3 && !strings.Contains(r, "master_link_status:up") {
			t.Errorf("replica %d just after StartCluster: %s %v, want master_link_status:up", i, r, err)
		}
	}
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.Addr)
	}
	if diff := cmp.Diff(addrs, c.Addrs()); diff != "" || len(addrs) != 6 {
		t.Errorf("Addrs mismatch (-nodes +Addrs):\n%s", diff)
	}
	dirs := map[string]bool{}
	for i, n := range c.Nodes {
		v, err := c.Do(n.Addr, "ROLE")
		if err != nil {
			t.Fatal(err)
		}
		role := fmt.Sprint(v)
		if primary := strings.HasPrefix(role, "[master"); primary != (i < 3) {
			t.Errorf("node %d: ROLE %s, want the first three primaries", i, role)
		}
		if i >= 3 && !strings.Contains(role, "127.0.0.1") {
			t.Errorf("node %d: ROLE %s, want a replica of a loopback primary", i, role)
		}
		got := map[string]string{}
		for _, name := range []string{"cluster-node-timeout", "save", "appendonly", "bind", "dir"} {
			got[name] = config(t, n.Addr, name)
		}
		dirs[got["dir"]] = true
		delete(got, "dir")
		want := map[string]string{"cluster-node-timeout": "2000", "save": "", "appendonly": "no", "bind": "127.0.0.1"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("node %d: configuration mismatch (-want +got):\n%s", i, diff)
		}
	}
	if len(dirs) != 6 {
		t.Errorf("%d data directories for 6 nodes, want one each", len(dirs))
	}
}

// notSkipped fails t if it was skipped while the programs it needs are
// installed (call it deferred).
func notSkipped(t *testing.T, bins ...string) {
	for _, b := range bins {
		if _, err := exec.LookPath(b); err != nil {
			return
		}
	}
	if t.Skipped() {
		t.Errorf("skipped though %s installed", strings.Join(bins, " and "))
	}
}
