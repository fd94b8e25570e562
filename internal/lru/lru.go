// Package lru is what the keyed guards share (breaker.Keyed; ratelimit.Keyed
// can move to it): an [Index] of entries by key that is safe on keys that
// are not equal to themselves, recency [List]s of those entries, and a
// bounded [Cache] of one index and one list. Every operation is O(1).
// Nothing here is safe for simultaneous use: the guard holds its lock.
package lru

// Entry is one tracked key and its value. Entries are used by pointer and
// never copied, so Value may hold locks and atomics.
type Entry[K comparable, V any] struct {
	Value      V
	key        K
	prev, next *Entry[K, V]
	list       *List[K, V] // the list e is on; nil: none
}

// Key returns the key e was added to an [Index] under.
func (e *Entry[K, V]) Key() K { return e.key }

// List returns the list e is on, nil if none.
func (e *Entry[K, V]) List() *List[K, V] { return e.list }

// Remove takes e off its list, if it is on one.
func (e *Entry[K, V]) Remove() {
	l := e.list
	if l == nil {
		return
	}
	e.prev.next, e.next.prev = e.next, e.prev
	e.prev, e.next, e.list = nil, nil, nil
	l.n--
}

// List is a recency list of entries: its front is the most recently used,
// its back the least. The zero List is empty and ready to use; a List must
// not be copied once used.
type List[K comparable, V any] struct {
	root Entry[K, V] // sentinel: root.next is the front, root.prev the back
	n    int
}

func (l *List[K, V]) lazyInit() {
	if l.root.next == nil {
		l.root.prev, l.root.next = &l.root, &l.root
	}
}

// Len returns the number of entries on l.
func (l *List[K, V]) Len() int { return l.n }

// PushFront makes e the most recently used entry of l, taking it off the
// list it was on (l included).
func (l *List[K, V]) PushFront(e *Entry[K, V]) {
	e.Remove()
	l.lazyInit()
	e.prev, e.next, e.list = &l.root, l.root.next, l
	e.next.prev, l.root.next = e, e
	l.n++
}

// PushBack makes e the least recently used entry of l, taking it off the
// list it was on (l included).
func (l *List[K, V]) PushBack(e *Entry[K, V]) {
	e.Remove()
	l.lazyInit()
	e.prev, e.next, e.list = l.root.prev, &l.root, l
	e.prev.next, l.root.prev = e, e
	l.n++
}

// Back returns the least recently used entry of l, nil if l is empty.
func (l *List[K, V]) Back() *Entry[K, V] {
	if l.n == 0 {
		return nil
	}
	return l.root.prev
}

// All calls yield for each entry of l, most recently used first, until
// yield returns false. yield must not change l.
func (l *List[K, V]) All(yield func(*Entry[K, V]) bool) {
	if l.n == 0 {
		return
	}
	for e := l.root.next; e != &l.root; e = e.next {
		if !yield(e) {
			return
		}
	}
}

// Index maps keys to entries. Go maps cannot find a key that is not equal
// to itself (a float NaN, or an interface, array or struct holding one):
// all such keys share one entry, tracked like any other. The zero Index is
// empty and ready to use.
type Index[K comparable, V any] struct {
	m   map[K]*Entry[K, V] // every tracked key equal to itself
	nan *Entry[K, V]       // the entry of keys not equal to themselves, if tracked
}

// Get returns the entry of key, nil if key is not tracked.
func (x *Index[K, V]) Get(key K) *Entry[K, V] {
	if key != key { // NaN, or a value holding one
		return x.nan
	}
	return x.m[key]
}

// Add tracks e under key, which must not be tracked yet.
func (x *Index[K, V]) Add(key K, e *Entry[K, V]) {
	e.key = key
	if key != key {
		x.nan = e
		return
	}
	if x.m == nil {
		x.m = make(map[K]*Entry[K, V])
	}
	x.m[key] = e
}

// Delete stops tracking e (which stays on its list, if any). It goes by
// the entry, not by its key, so that it never misses.
func (x *Index[K, V]) Delete(e *Entry[K, V]) {
	if e == x.nan {
		x.nan = nil
		return
	}
	if x.m[e.key] == e {
		delete(x.m, e.key)
	}
}

// Len returns the number of tracked entries.
func (x *Index[K, V]) Len() int {
	n := len(x.m)
	if x.nan != nil {
		n++
	}
	return n
}

// Cache is an Index of at most Max entries, all on one recency list: the
// shape of a keyed guard whose entries are all alike (ratelimit.Keyed).
// The zero Cache is not usable: set Max > 0.
type Cache[K comparable, V any] struct {
	Max   int
	index Index[K, V]
	list  List[K, V]
}

// Get returns the entry of key, made the most recently used. If key is not
// tracked, Get makes its entry, calls init on its Value, and, if that
// makes more than Max entries, forgets the least recently used one and
// returns it as evicted (nil otherwise).
func (c *Cache[K, V]) Get(key K, init func(*V)) (e, evicted *Entry[K, V]) {
	if e = c.index.Get(key); e == nil {
		if c.index.Len() >= c.Max {
			evicted = c.list.Back()
			evicted.Remove()
			c.index.Delete(evicted)
		}
		e = new(Entry[K, V])
		init(&e.Value)
		c.index.Add(key, e)
	}
	c.list.PushFront(e)
	return e, evicted
}

// Len returns the number of tracked entries, at most Max.
func (c *Cache[K, V]) Len() int { return c.index.Len() }
