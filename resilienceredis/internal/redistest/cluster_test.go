package redistest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// StartCluster starts six nodes on loopback, each in a directory of its
// own with no persistence and a node timeout of 2000 ms: the first three
// primaries, each of the others a replica of one of them, and Addrs
// lists them in that order.
func TestStartCluster(t *testing.T) {
	c := StartCluster(t)
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
