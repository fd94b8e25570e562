package cache

import "sync/atomic"

// table is a shard's index of records by key: open addressing with linear
// probing, each slot an atomic pointer, so that a hit reads it without a
// lock while the writers (under the shard's lock) change it. A slot is
// nil (never used: a probe stops there), a record, or the cache's tomb (a
// removed record: a probe goes on). A write publishes a record that is
// complete; a table that needs more room is copied into a new one, which
// replaces it in one atomic store, and the old one is not written again.
type table[T any] struct {
	slots []atomic.Pointer[record[T]]
	mask  uint64
	used  int // slots not nil: records and tombs (under the shard's lock)
}

// minSlots is the size of a shard's first table.
const minSlots = 8

// slot is where the probe for hash h starts: the bits above those that
// chose the shard.
func (t *table[T]) slot(h uint64) uint64 { return (h >> 16) & t.mask }

// find returns the record of key, nil if none; safe without the lock.
// key is never empty, the tomb's key. A table is never full (see put), so
// the probe ends.
func (t *table[T]) find(key string, h uint64) *record[T] {
	for i := t.slot(h); ; i = (i + 1) & t.mask {
		r := t.slots[i].Load()
		if r == nil {
			return nil
		}
		if r.key == key {
			return r
		}
	}
}

// find returns the record of key in sh, nil if none; safe without the lock.
func (sh *shard[T]) find(key string, h uint64) *record[T] {
	if t := sh.table.Load(); t != nil {
		return t.find(key, h)
	}
	return nil
}

// put stores rec in sh's table in place of the record of its
// key, and returns that record, nil if none; sh.mu is held. A table
// stays at most three quarters used (records and tombs): past that it is
// copied into one of at least twice as many slots as records.
func (sh *shard[T]) put(rec *record[T], tomb *record[T]) (old *record[T]) {
	t := sh.table.Load()
	if t == nil || (t.used+1)*4 > len(t.slots)*3 {
		t = sh.grow(t, tomb)
	}
	free := -1
	i := t.slot(rec.hash)
	for ; ; i = (i + 1) & t.mask {
		r := t.slots[i].Load()
		if r == nil {
			break
		}
		if r == tomb {
			if free < 0 {
				free = int(i)
			}
			continue
		}
		if r.key == rec.key {
			t.slots[i].Store(rec)
			return r
		}
	}
	if free >= 0 {
		t.slots[free].Store(rec)
	} else {
		t.slots[i].Store(rec)
		t.used++
	}
	sh.live++
	return nil
}

// grow returns a new table of sh holding the records of t (nil: none),
// with room for as many again, and makes it sh's table.
func (sh *shard[T]) grow(t *table[T], tomb *record[T]) *table[T] {
	n := minSlots
	for n < 2*(sh.live+1) {
		n *= 2
	}
	nt := &table[T]{slots: make([]atomic.Pointer[record[T]], n), mask: uint64(n - 1)}
	if t != nil {
		for i := range t.slots {
			r := t.slots[i].Load()
			if r == nil || r == tomb {
				continue
			}
			j := nt.slot(r.hash)
			for nt.slots[j].Load() != nil {
				j = (j + 1) & nt.mask
			}
			nt.slots[j].Store(r)
			nt.used++
		}
	}
	sh.table.Store(nt)
	return nt
}

// del removes rec from sh's table; sh.mu is held.
func (sh *shard[T]) del(rec *record[T], tomb *record[T]) {
	t := sh.table.Load()
	if t == nil {
		return
	}
	for i := t.slot(rec.hash); ; i = (i + 1) & t.mask {
		r := t.slots[i].Load()
		if r == nil {
			return
		}
		if r == rec {
			t.slots[i].Store(tomb)
			sh.live--
			return
		}
	}
}

// clear empties sh's table of the tombs its records left, keeping its
// slots (as clear keeps a map's); sh.mu is held, and the table holds no
// record. A hit that meets a cleared slot stops there: a miss.
func (sh *shard[T]) clear() {
	t := sh.table.Load()
	if t == nil {
		return
	}
	for i := range t.slots {
		t.slots[i].Store(nil)
	}
	t.used = 0
}
