package lru

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// maxKeys is more entries than any list of these tests holds: keys stops
// there, so that a list whose links form a cycle that misses its root
// fails the test instead of hanging it.
const maxKeys = 64

// keys returns the keys of l, most recently used first (at most maxKeys).
func keys[K comparable, V any](l *List[K, V]) []K {
	var ks []K
	for e := range l.All {
		ks = append(ks, e.Key())
		if len(ks) == maxKeys {
			break
		}
	}
	return ks
}

func TestListOrderAndMoves(t *testing.T) {
	var x Index[int, string]
	var a, b List[int, string]
	es := make([]*Entry[int, string], 5)
	for i := range es {
		es[i] = &Entry[int, string]{}
		x.Add(i, es[i])
		a.PushFront(es[i])
	}
	if diff := cmp.Diff([]int{4, 3, 2, 1, 0}, keys(&a)); diff != "" {
		t.Fatalf("keys mismatch (-want +got):\n%s", diff)
	}
	a.PushFront(es[1]) // to the front again
	b.PushBack(es[3])  // onto another list
	b.PushBack(es[0])
	if diff := cmp.Diff([]int{1, 4, 2}, keys(&a)); diff != "" {
		t.Errorf("a mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{3, 0}, keys(&b)); diff != "" {
		t.Errorf("b mismatch (-want +got):\n%s", diff)
	}
	if a.Len() != 3 || b.Len() != 2 || a.Back() != es[2] || b.Back() != es[0] || es[0].List() != &b {
		t.Errorf("Len %d %d, Back %v %v: want 3 2, keys 2 0 on their lists", a.Len(), b.Len(), a.Back().Key(), b.Back().Key())
	}
	es[2].Remove()
	es[2].Remove() // twice: a no-op
	if es[2].List() != nil || a.Len() != 2 || a.Back() != es[4] {
		t.Errorf("after Remove: list %p, Len %d, Back %d", es[2].List(), a.Len(), a.Back().Key())
	}
	var empty List[int, string]
	if empty.Back() != nil || len(keys(&empty)) != 0 {
		t.Error("the zero List is not empty")
	}
}

func TestIndexKeysNotEqualToThemselves(t *testing.T) {
	var x Index[float64, int]
	nan, one := &Entry[float64, int]{}, &Entry[float64, int]{}
	x.Add(math.NaN(), nan)
	x.Add(1, one)
	if x.Get(math.NaN()) != nan || x.Get(1) != one || x.Get(2) != nil || x.Len() != 2 {
		t.Fatalf("Get(NaN) %p, Get(1) %p, Get(2) %p, Len %d; want %p %p nil 2", x.Get(math.NaN()), x.Get(1), x.Get(2), x.Len(), nan, one)
	}
	x.Delete(nan)
	x.Delete(one)
	x.Delete(one) // twice: a no-op
	if x.Get(math.NaN()) != nil || x.Get(1) != nil || x.Len() != 0 {
		t.Fatalf("after Delete: Len %d", x.Len())
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := Cache[string, int]{Max: 2}
	made := 0
	init := func(v *int) { made++; *v = made }
	a, ev := c.Get("a", init)
	if ev != nil || a.Value != 1 {
		t.Fatalf("Get(a) = %d, evicted %v", a.Value, ev)
	}
	c.Get("b", init)
	if again, _ := c.Get("a", init); again != a { // a is now the most recent
		t.Fatal("Get(a) made a new entry for a tracked key")
	}
	_, ev = c.Get("c", init)
	if ev == nil || ev.Key() != "b" {
		t.Fatalf("Get(c) evicted %v, want b", ev)
	}
	if c.Len() != 2 || made != 3 {
		t.Fatalf("Len %d, made %d; want 2 and 3", c.Len(), made)
	}
	if b, _ := c.Get("b", init); b.Value != 4 {
		t.Fatalf("b came back with %d, want a new entry (4)", b.Value)
	}
}
