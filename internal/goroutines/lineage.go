package goroutines

// Lineage sorts the goroutines of snapshots into those of a group and the
// others, by who created them. A goroutine is of the group when it is the
// root, was put in with Include, or was created, directly or through other
// goroutines, by one of the group. A goroutine put out with Exclude is not,
// and neither is any goroutine it created. A goroutine whose chain of
// creators reaches one that has exited unseen (or that the traceback does
// not name) is counted in, so that none of the group is missed.
//
// A goroutine, once sorted, stays where it was put: Member remembers each
// answer, for the goroutine and for every creator it looked at. The zero
// Lineage has root 0 (no goroutine) and sorts nothing yet; use NewLineage.
// A Lineage is not safe for simultaneous use.
type Lineage struct {
	root    uint64
	in, out map[uint64]bool
}

// NewLineage returns a Lineage of the group of goroutine root.
func NewLineage(root uint64) *Lineage {
	return &Lineage{root: root, in: map[uint64]bool{}, out: map[uint64]bool{}}
}

// Include puts goroutine id in the group; it wins over Exclude.
func (l *Lineage) Include(id uint64) { l.in[id] = true }

// Exclude puts goroutine id out of the group.
func (l *Lineage) Exclude(id uint64) { l.out[id] = true }

// Member reports whether goroutine id is of the group. byID holds the
// goroutines of the snapshot id was read from, by ID; it is read, never
// written. The walk up the chain of creators ends after len(byID) steps,
// so a chain that loops (which no traceback gives) counts id in.
func (l *Lineage) Member(id uint64, byID map[uint64]*State) bool {
	var chain []uint64
	in := true
	for cur := id; ; {
		if cur == l.root || l.in[cur] {
			break
		}
		if l.out[cur] {
			in = false
			break
		}
		s := byID[cur]
		if s == nil { // exited unseen, or 0: a creator the traceback does not name
			break
		}
		chain = append(chain, cur)
		if len(chain) > len(byID) {
			break
		}
		cur = s.Parent
	}
	for _, c := range chain {
		if in {
			l.in[c] = true
		} else {
			l.out[c] = true
		}
	}
	return in
}
