package fleetbudget

import (
	"context"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// fleet is n instances sharing a MemStore on one fake clock.
type fleet struct {
	clk   *clock.Fake
	store *MemStore
	inst  []*Budget
}

func newFleet(n int, c Config) *fleet {
	clk := clock.NewFake()
	c.Clock = clk
	f := &fleet{clk: clk, store: NewMemStore(c.Window, clk)}
	for range n {
		f.inst = append(f.inst, New(c))
	}
	return f
}

// run runs rounds rounds of one flush interval (10ms): each instance makes
// calls executions per round, each wanting want retries, and flushes at
// the end of the round, the instances one after the other. It returns the
// executions and the retries granted.
func (f *fleet) run(t *testing.T, rounds, calls, want int) (execs, granted int64) {
	t.Helper()
	for range rounds {
		for _, b := range f.inst {
			for range calls {
				b.Deposit()
				execs++
				for range want {
					if b.Withdraw() {
						granted++
					}
				}
			}
		}
		for _, b := range f.inst {
			if err := b.Flush(context.Background(), f.store); err != nil {
				t.Fatal(err)
			}
		}
		f.clk.Advance(10 * time.Millisecond)
	}
	return execs, granted
}

// Three instances whose every execution wants two retries keep the fleet
// at Ratio: granted retries are within Ratio × executions, plus the one
// retry per instance that rounding lets through, and not far below it.
func TestFleetHoldsRatio(t *testing.T) {
	f := newFleet(3, Config{Ratio: 0.1, Window: time.Second})
	execs, granted := f.run(t, 300, 20, 2)
	limit := 0.1*float64(execs) + 3
	if float64(granted) > limit || float64(granted) < 0.9*0.1*float64(execs) {
		t.Errorf("granted %d retries for %d executions, want within [%v, %v]", granted, execs, 0.09*float64(execs), limit)
	}
}

// A fleet that ran without retries (a healthy dependency) has a large
// headroom; when the dependency fails for everyone at once, the instances
// must spend it once between them, not once each: before the next flush,
// the fleet grants at most Ratio × its window's executions (plus Ratio ×
// the new ones), whatever the number of instances.
func TestFleetSpendsHeadroomOnce(t *testing.T) {
	const n = 5
	f := newFleet(n, Config{Ratio: 0.1, Window: time.Second})
	execs, _ := f.run(t, 50, 20, 0) // 5000 executions, no retries: headroom 500
	var granted, newExecs int64
	for _, b := range f.inst {
		for range 20 {
			b.Deposit()
			newExecs++
			for range 100 {
				if b.Withdraw() {
					granted++
				}
			}
		}
	}
	limit := 0.1*float64(execs+newExecs) + n
	if float64(granted) > limit {
		t.Errorf("granted %d retries before the next flush, want at most %v (Ratio × %d executions, + %d)", granted, limit, execs+newExecs, n)
	}
	if float64(granted) < 0.9*0.1*float64(execs) {
		t.Errorf("granted %d retries, want the headroom spent: at least %v", granted, 0.09*float64(execs))
	}
}

// The floor grants each instance Reserve retries over the window with no
// execution at all, then denies, and grants again once the window slid
// past them.
func TestFloor(t *testing.T) {
	f := newFleet(2, Config{Reserve: 5, Window: time.Second})
	for i, b := range f.inst {
		var got int
		for range 10 {
			if b.Withdraw() {
				got++
			}
		}
		if got != 5 {
			t.Errorf("instance %d: granted %d of 10 with no execution, want the floor, 5", i, got)
		}
	}
	f.clk.Advance(time.Second + time.Millisecond)
	if !f.inst[0].Withdraw() {
		t.Error("no retry granted once the window slid past the floor's retries")
	}
}

// The floor is a minimum, not an addition: over a long run with executions
// enough for the ratio, the fleet grants Ratio × executions, not that plus
// the floors.
func TestFloorIsAMinimum(t *testing.T) {
	f := newFleet(4, Config{Ratio: 0.1, Reserve: 20, Window: time.Second})
	execs, granted := f.run(t, 500, 50, 2) // 100k executions over 5 s
	limit := 0.1*float64(execs) + 4*20     // the first window's floors at most
	if float64(granted) > limit {
		t.Errorf("granted %d retries for %d executions, want at most %v", granted, execs, limit)
	}
}

// A flush that failed drops its counts from the view (the store did not
// take them); the next flush sends only newer counts.
func TestDrop(t *testing.T) {
	b := New(Config{Ratio: 1, Window: time.Second, Clock: clock.NewFake()})
	b.Deposit()
	b.Deposit()
	if c, r := b.Take(); c != 2 || r != 0 {
		t.Fatalf("Take = %d, %d; want 2, 0", c, r)
	}
	if first, second := b.Withdraw(), b.Withdraw(); !first || !second {
		t.Fatal("retries within Ratio × the executions in flight denied")
	}
	if b.Withdraw() {
		t.Fatal("a third retry for two executions granted")
	}
	b.Drop()
	if c, r := b.Take(); c != 0 || r != 2 {
		t.Fatalf("Take after Drop = %d, %d; want 0, 2", c, r)
	}
}

func TestDepositDoesNotAllocate(t *testing.T) {
	b := New(Config{Ratio: 0.1, Window: time.Second})
	if n := testing.AllocsPerRun(1000, b.Deposit); n != 0 {
		t.Errorf("Deposit: %v allocs, want 0", n)
	}
}
