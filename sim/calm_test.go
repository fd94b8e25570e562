package sim

import (
	"testing"
)

// The count of goroutines created in the process, which tells the
// scheduler whether the pipeline started one, stays as it is while none
// is created and grows when one is. Tests of other packages' goroutines
// may start one between two reads: one read out of 100 pairs equal is
// enough.
func TestGoroutinesCreatedCountsTheGoroutinesStarted(t *testing.T) {
	same := false
	for range 100 {
		if first := goroutinesCreated(); goroutinesCreated() == first {
			same = true
			break
		}
	}
	if !same {
		t.Error("two reads in a row of the goroutines created differ every time: every settle would read the stacks")
	}
	before := goroutinesCreated()
	done := make(chan struct{})
	go close(done)
	<-done
	if after := goroutinesCreated(); after <= before {
		t.Errorf("goroutines created: %d, then %d after one was started; want more", before, after)
	}
}

// The run is calm (the scheduler reads no stacks, and enter takes its
// caller for the holder of the baton) only when no goroutine of the run
// is blocked off the clock, none waits for the baton, and none was
// created since the last settle.
func TestCalmOnlyWhenNothingElseCanRun(t *testing.T) {
	calm := func(outside int, pending []*proc, createdSince uint64) bool {
		w := newWorld()
		w.outside, w.pending = outside, pending
		for range 100 { // as above: another package's goroutine may start between the reads
			w.created = goroutinesCreated() - createdSince
			if w.calmLocked() {
				return true
			}
		}
		return false
	}
	for _, c := range []struct {
		name         string
		outside      int
		pending      []*proc
		createdSince uint64
		want         bool
	}{
		{"nothing else", 0, nil, 0, true},
		{"a goroutine blocked off the clock", 1, nil, 0, false},
		{"a goroutine waiting for the baton", 0, []*proc{{}}, 0, false},
		{"a goroutine created since", 0, nil, 1, false},
	} {
		if got := calm(c.outside, c.pending, c.createdSince); got != c.want {
			t.Errorf("%s: calm = %v, want %v", c.name, got, c.want)
		}
	}
}
