package redistest

import (
	"strings"
	"testing"
	"time"
)

// WaitOK fails the test when a running node does not report a cluster
// that is ok (here a server without cluster support), and skips nodes
// that are not running.
func TestWaitOKFails(t *testing.T) {
	s := Start(t)
	c := &Cluster{Nodes: []*Server{{Addr: "127.0.0.1:1"}, s}} // the first never ran
	_, failed := run(t, func(tb testing.TB) { c.WaitOK(tb, 50*time.Millisecond) })
	want := "redistest: cluster ok on every node: not within 50ms: " + s.Addr + ": ERR "
	if len(failed) != 1 || !strings.HasPrefix(failed[0], want) {
		t.Errorf("failed with %q, want one failure starting %q", failed, want)
	}
	c.Nodes = c.Nodes[:1]
	if _, failed := run(t, func(tb testing.TB) { c.WaitOK(tb, 50*time.Millisecond) }); len(failed) != 0 {
		t.Errorf("no node running: failed with %q, want nothing to wait for", failed)
	}
}
