package goroutines

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// snap builds a snapshot's byID from pairs of goroutine and creator.
func snap(pairs ...uint64) map[uint64]*State {
	m := map[uint64]*State{}
	for i := 0; i+1 < len(pairs); i += 2 {
		m[pairs[i]] = &State{ID: pairs[i], Parent: pairs[i+1]}
	}
	return m
}

func TestLineageMember(t *testing.T) {
	const root = 10
	for _, c := range []struct {
		name    string
		include []uint64
		exclude []uint64
		byID    map[uint64]*State
		id      uint64
		want    bool
	}{
		{"the root", nil, nil, snap(root, 1), root, true},
		{"a child of the root", nil, nil, snap(root, 1, 11, root), 11, true},
		{"a child of the root, which has exited", nil, nil, snap(11, root), 11, true},
		{"a grandchild of the root", nil, nil, snap(root, 1, 11, root, 12, 11), 12, true},
		{"included", []uint64{20}, nil, snap(20, 1), 20, true},
		{"a child of an included goroutine", []uint64{20}, nil, snap(20, 1, 21, 20), 21, true},
		{"excluded", nil, []uint64{30}, snap(30, root), 30, false},
		{"a child of an excluded goroutine", nil, []uint64{30}, snap(30, 1, 31, 30), 31, false},
		{"a child of an excluded goroutine that has exited", nil, []uint64{30}, snap(31, 30), 31, false},
		{"a grandchild of an excluded goroutine that has exited", nil, []uint64{30}, snap(31, 30, 32, 31), 32, false},
		{"a creator that exited unseen", nil, nil, snap(41, 40), 41, true},
		{"a creator the traceback does not name", nil, nil, snap(41, 0), 41, true},
		{"a chain of creators that loops", nil, nil, snap(51, 52, 52, 51), 51, true},
		{"in both: included wins", []uint64{60}, []uint64{60}, snap(60, 1), 60, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := NewLineage(root)
			for _, id := range c.include {
				l.Include(id)
			}
			for _, id := range c.exclude {
				l.Exclude(id)
			}
			if got := within(t, "Member", func() bool { return l.Member(c.id, c.byID) }); got != c.want {
				t.Errorf("Member(%d) = %v, want %v", c.id, got, c.want)
			}
		})
	}
}

// TestLineageRemembers checks that Member sorts every goroutine of the
// chain it walked, and that a sorted goroutine stays where it was put
// whatever a later snapshot says of its creator.
func TestLineageRemembers(t *testing.T) {
	const root = 10
	l := NewLineage(root)
	l.Exclude(30)
	// 33 → 32 → 31 → 30 (out); 13 → 12 → 11 → root (in).
	if l.Member(33, snap(31, 30, 32, 31, 33, 32)) {
		t.Fatal("Member(33) = true, want false")
	}
	if !l.Member(13, snap(11, root, 12, 11, 13, 12)) {
		t.Fatal("Member(13) = false, want true")
	}
	// A later snapshot where the creators say otherwise, and where
	// nothing is alive but the goroutines asked about.
	later := snap(11, 30, 12, 30, 13, 30, 31, root, 32, root, 33, root)
	got := map[uint64]bool{}
	for _, id := range []uint64{11, 12, 13, 31, 32, 33} {
		got[id] = l.Member(id, later)
	}
	want := map[uint64]bool{11: true, 12: true, 13: true, 31: false, 32: false, 33: false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// TestLineageLongChains walks chains of creators far longer than any
// recursion would like, to the root and to an excluded goroutine.
func TestLineageLongChains(t *testing.T) {
	const root, n = 1, 5000
	for _, c := range []struct {
		top  uint64 // the creator of the first goroutine of the chain
		want bool
	}{{root, true}, {2, false}} {
		l := NewLineage(root)
		l.Exclude(2)
		byID := map[uint64]*State{}
		parent := c.top
		for id := uint64(100); id < 100+n; id++ {
			byID[id] = &State{ID: id, Parent: parent}
			parent = id
		}
		if got := within(t, "Member", func() bool { return l.Member(parent, byID) }); got != c.want {
			t.Errorf("Member(the end of a chain of %d from %d) = %v, want %v", n, c.top, got, c.want)
		}
	}
}

// TestLineageLeavesTheSnapshotAlone checks that Member does not write the
// snapshot it reads.
func TestLineageLeavesTheSnapshotAlone(t *testing.T) {
	l := NewLineage(10)
	byID := snap(11, 10, 12, 11)
	l.Member(12, byID)
	if diff := cmp.Diff(snap(11, 10, 12, 11), byID); diff != "" {
		t.Errorf("byID changed (-want +got):\n%s", diff)
	}
}
