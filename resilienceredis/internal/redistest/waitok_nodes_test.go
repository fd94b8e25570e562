package redistest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// clusterNodes starts n cluster-enabled nodes for t (stopped when t
// ends), each owning every slot if full: clusters of one, each ok once
// its node has been a primary for a moment.
func clusterNodes(t *testing.T, n int, full bool, config ...string) []*Server {
	t.Helper()
	conf := append([]string{"--cluster-enabled", "yes", "--cluster-node-timeout", "2000"}, config...)
	var nodes []*Server
	for range n {
		s, err := startNode(t.TempDir(), conf)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Stop)
		nodes = append(nodes, s)
		if full {
			if _, err := (&Cluster{}).Do(s.Addr, "CLUSTER", "ADDSLOTSRANGE", 0, 16383); err != nil {
				t.Fatal(err)
			}
		}
	}
	if full {
		for _, s := range nodes {
			Eventually(t, 10*time.Second, "a cluster of one is ok", func() (bool, string) {
				info, err := (&Cluster{}).Do(s.Addr, "CLUSTER", "INFO")
				return strings.Contains(fmt.Sprint(info), "cluster_state:ok"), fmt.Sprint(info, err)
			})
		}
	}
	return nodes
}

// busPort returns the cluster bus port of a node that startNode started.
func busPort(s *Server) string {
	for i, a := range s.config {
		if a == "--cluster-port" {
			return s.config[i+1]
		}
	}
	return ""
}

// waitOKFails runs WaitOK on nodes for 100ms and returns its one failure.
func waitOKFails(t *testing.T, nodes ...*Server) string {
	t.Helper()
	_, failed := run(t, func(tb testing.TB) { (&Cluster{Nodes: nodes}).WaitOK(tb, 100*time.Millisecond) })
	if len(failed) != 1 {
		t.Fatalf("WaitOK failed with %q, want one failure", failed)
	}
	return failed[0]
}

// WaitOK fails while a node's cluster is not ok, a node does not answer
// INFO or CLUSTER SHARDS, a replica has lost its primary, or two nodes disagree on who owns
// the slots.
func TestWaitOKChecks(t *testing.T) {
	const prefix = "redistest: cluster ok on every node: not within 100ms: "
	t.Run("state", func(t *testing.T) {
		t.Parallel()
		s := clusterNodes(t, 1, false)[0] // no slots: cluster_state:fail
		if got := waitOKFails(t, s); !strings.HasPrefix(got, prefix+s.Addr+": ") || !strings.Contains(got, "cluster_state:fail") {
			t.Errorf("WaitOK on a node without slots: %q", got)
		}
	})
	t.Run("info", func(t *testing.T) {
		t.Parallel()
		s := clusterNodes(t, 1, true, "--rename-command", "INFO", "")[0]
		if got := waitOKFails(t, s); !strings.HasPrefix(got, prefix+s.Addr+": ERR unknown command") {
			t.Errorf("WaitOK on a node without INFO: %q", got)
		}
	})
	t.Run("shards", func(t *testing.T) {
		t.Parallel()
		s := clusterNodes(t, 1, true, "--user", "default", "on", "nopass", "~*", "&*", "+@all", "-cluster|shards")[0]
		if got := waitOKFails(t, s); !strings.HasPrefix(got, prefix+s.Addr+": NOPERM") {
			t.Errorf("WaitOK on a node that refuses CLUSTER SHARDS: %q", got)
		}
	})
	t.Run("disagree", func(t *testing.T) {
		t.Parallel()
		n := clusterNodes(t, 2, true) // two clusters, each owning every slot
		a, b := n[0], n[1]
		if got := waitOKFails(t, a, b); !strings.HasPrefix(got, prefix+"the nodes disagree on the primaries: ") {
			t.Errorf("WaitOK on two clusters: %q", got)
		}
		(&Cluster{Nodes: []*Server{a}}).WaitOK(t, time.Second)
	})
	t.Run("replica", func(t *testing.T) {
		t.Parallel()
		p, r := clusterNodes(t, 1, true)[0], clusterNodes(t, 1, false)[0]
		c := &Cluster{}
		host, port, _ := strings.Cut(p.Addr, ":")
		if _, err := c.Do(r.Addr, "CLUSTER", "MEET", host, port, busPort(p)); err != nil {
			t.Fatal(err)
		}
		id, err := c.Do(p.Addr, "CLUSTER", "MYID")
		if err != nil {
			t.Fatal(err)
		}
		Eventually(t, 10*time.Second, "the replica knows its primary", func() (bool, string) {
			_, err := c.Do(r.Addr, "CLUSTER", "REPLICATE", id)
			return err == nil, fmt.Sprint(err)
		})
		(&Cluster{Nodes: []*Server{p, r}}).WaitOK(t, 10*time.Second)
		p.Kill(t) // the replica's link is down at once; the cluster is ok for the node timeout (2s)
		if got := waitOKFails(t, p, r); !strings.HasPrefix(got, prefix+r.Addr+": replica not in sync: ") {
			t.Errorf("WaitOK on a replica without its primary: %q", got)
		}
	})
}
