package redistest

import (
	"fmt"
	"strings"
	"testing"
)

func TestStartCluster(t *testing.T) {
	c := StartCluster(t)
	var prim int
	for _, n := range c.Nodes {
		v, err := c.Do(n.Addr, "ROLE")
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(fmt.Sprint(v), "[master") {
			prim++
		}
	}
	if prim != 3 {
		t.Errorf("%d primaries, want 3", prim)
	}
}
