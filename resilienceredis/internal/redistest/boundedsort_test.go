package redistest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// This file's name sorts before every other test file's, so TestSortStrings
// runs first (go test runs the tests of a package in the order of their
// files): the cluster tests reach sortStrings through WaitOK with no bound
// of their own, and a sort that never ended would hang them instead of
// failing here.

// sortStrings sorts in increasing order.
func TestSortStrings(t *testing.T) {
	s := []string{"d", "b", "e", "a", "c", "b"}
	done := make(chan struct{})
	go func() { defer close(done); sortStrings(s) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second): // a bound for failure, not a wait: six strings sort at once
		t.Fatal("sortStrings did not return after 2s")
	}
	if diff := cmp.Diff([]string{"a", "b", "b", "c", "d", "e"}, s); diff != "" {
		t.Errorf("sortStrings mismatch (-want +got):\n%s", diff)
	}
}
