package lru

import "testing"

// TestBackOfOneAndOfEmptied: Back of a list of one entry is that entry;
// of a list emptied since, nil.
func TestBackOfOneAndOfEmptied(t *testing.T) {
	var l List[int, string]
	e := &Entry[int, string]{}
	l.PushFront(e)
	if got := l.Back(); got != e {
		t.Fatalf("Back of a list of one = %p, want %p", got, e)
	}
	e.Remove()
	if got := l.Back(); got != nil {
		t.Fatalf("Back of an emptied list = %p, want nil", got)
	}
}

// TestCacheEvictedLeavesTheList: the entry a Cache forgets is off its
// recency list too, which holds exactly the entries tracked.
func TestCacheEvictedLeavesTheList(t *testing.T) {
	c := Cache[int, int]{Max: 2}
	for k := range 3 {
		_, evicted := c.Get(k, func(v *int) { *v = k })
		if k < 2 {
			continue
		}
		if evicted == nil || evicted.Key() != 0 {
			t.Fatalf("Get(2) evicted %v, want the entry of 0", evicted)
		}
		if evicted.List() != nil {
			t.Error("the evicted entry is still on a list")
		}
	}
	if n, m := c.list.Len(), c.Len(); n != 2 || m != 2 {
		t.Errorf("after 3 keys in a Cache of 2: list of %d, index of %d; want 2, 2", n, m)
	}
}
