package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// StartCluster returns only once every replica is in sync with its
// primary: with a replication that starts 3s after a replica asks (a
// diskless sync delay), the replicas are in sync just after it returns.
func TestStartClusterWaitsForTheReplicas(t *testing.T) {
	defer notSkipped(t, "redis-server", "redis-cli")
	c := StartCluster(t, "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "3")
	for i, n := range c.Nodes[3:] {
		repl, err := c.Do(n.Addr, "INFO", "replication")
		if r := fmt.Sprint(repl); err != nil || !strings.Contains(r, "master_link_status:up") {
			t.Errorf("replica %d just after StartCluster: %s %v, want master_link_status:up", i+3, r, err)
		}
	}
}

// dirTB is a fakeTB whose TempDir is dir.
type dirTB struct {
	*fakeTB
	dir string
}

func (d dirTB) TempDir() string { return d.dir }

// StartCluster fails the test when it cannot make a node's data
// directory (here, one that is there already), before it starts a node.
func TestStartClusterFailsWithoutItsDirectory(t *testing.T) {
	defer notSkipped(t, "redis-server", "redis-cli")
	base := t.TempDir()
	if err := os.Mkdir(filepath.Join(base, "0"), 0o700); err != nil {
		t.Fatal(err)
	}
	f := &fakeTB{TB: t}
	var c *Cluster
	done := make(chan struct{})
	go func() {
		defer close(done)
		c = StartCluster(dirTB{f, base})
	}()
	<-done
	if len(f.failed) != 1 || !strings.Contains(f.failed[0], "mkdir") {
		t.Errorf("StartCluster with its first directory there already failed with %q, want one mkdir error", f.failed)
	}
	if c != nil {
		t.Errorf("StartCluster returned a cluster of %d nodes, want none", len(c.Nodes))
	}
}
