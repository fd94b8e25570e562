package fleetbudget

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// A Window that Buckets does not divide slides in steps rounded up: a
// retry counts against the floor for at least Window, and no longer than
// one step more.
func TestWindowNotAMultipleOfBuckets(t *testing.T) {
	clk := clock.NewFake()
	b := New(Config{Reserve: 1, Window: 15, Clock: clk}) // steps of 2ns: a window of 20ns
	if !b.Withdraw() {
		t.Fatal("the floor's first retry denied")
	}
	clk.Advance(14)
	if b.Withdraw() {
		t.Fatal("a retry granted within Window of the floor's retry")
	}
	clk.Advance(6)
	if !b.Withdraw() {
		t.Fatal("no retry granted one step past the window")
	}
}

// The MemStore's window rounds up as the Budget's does: counts stay for
// at least the window, and leave one step after it.
func TestMemStoreWindowNotAMultipleOfBuckets(t *testing.T) {
	clk := clock.NewFake()
	m := NewMemStore(15, clk) // steps of 2ns
	ctx := context.Background()
	if c, r, err := m.Add(ctx, 3, 1); c != 3 || r != 1 || err != nil {
		t.Fatalf("Add = %d, %d, %v; want 3, 1, nil", c, r, err)
	}
	clk.Advance(14)
	if c, r, _ := m.Add(ctx, 1, 0); c != 4 || r != 1 {
		t.Fatalf("within the window: totals %d, %d; want 4, 1", c, r)
	}
	clk.Advance(6)
	if c, r, _ := m.Add(ctx, 0, 0); c != 1 || r != 0 {
		t.Fatalf("one step past the window of the first counts: totals %d, %d; want 1, 0", c, r)
	}
}

// NewMemStore with a nil clock runs on the real clock.
func TestMemStoreNilClock(t *testing.T) {
	m := NewMemStore(time.Hour, nil)
	if m.clock == nil {
		t.Fatal("nil clock kept")
	}
	if c, r, err := m.Add(context.Background(), 2, 1); c != 2 || r != 1 || err != nil {
		t.Fatalf("Add = %d, %d, %v; want 2, 1, nil", c, r, err)
	}
}

type failingStore struct{ err error }

func (s failingStore) Add(context.Context, int64, int64) (int64, int64, error) { return 0, 0, s.err }

// A Flush whose store fails returns its error and drops the counts it
// took: they grant nothing more afterwards.
func TestFlushErrorDropsTheCounts(t *testing.T) {
	b := New(Config{Ratio: 1, Window: time.Second, Clock: clock.NewFake()})
	b.Deposit()
	b.Deposit()
	errStore := errors.New("store down")
	if err := b.Flush(context.Background(), failingStore{errStore}); !errors.Is(err, errStore) {
		t.Fatalf("Flush = %v, want %v", err, errStore)
	}
	if b.Withdraw() {
		t.Fatal("a retry granted on executions of a failed flush")
	}
	if c, r := b.Take(); c != 0 || r != 0 {
		t.Fatalf("Take after a failed flush = %d, %d; want 0, 0", c, r)
	}
	b.Drop()
	// New executions grant Ratio × them, nothing of the dropped flush
	// weighing on them.
	b.Deposit()
	b.Deposit()
	var got int
	for range 4 {
		if b.Withdraw() {
			got++
		}
	}
	if got != 2 {
		t.Fatalf("granted %d retries for 2 new executions after a failed flush, want 2", got)
	}
}

// Headroom is the instance's share of the fleet's headroom at the last
// answer: share × (Ratio × fleet calls − fleet retries), negative when the
// fleet is over its ratio, 0 before any answer.
func TestHeadroom(t *testing.T) {
	b := New(Config{Ratio: 0.5, Window: time.Second, Clock: clock.NewFake()})
	if h := b.Headroom(); h != 0 {
		t.Fatalf("Headroom before any answer = %v, want 0", h)
	}
	b.Take()
	b.Settle(0, 0) // an empty fleet, the instance's own executions none
	if h := b.Headroom(); h != 0 {
		t.Fatalf("Headroom of an empty fleet = %v, want 0", h)
	}
	for range 10 {
		b.Deposit()
	}
	b.Take()
	b.Settle(40, 4) // own 10 of 40: 0.25 × (20 − 4)
	if h := b.Headroom(); h != 4 {
		t.Fatalf("Headroom = %v, want 4", h)
	}
	b.Take()
	b.Settle(40, 30) // 0.25 × (20 − 30)
	if h := b.Headroom(); h != -2.5 {
		t.Fatalf("Headroom of a fleet over its ratio = %v, want -2.5", h)
	}
	b.Take()
	b.Settle(0, 0)
	if h := b.Headroom(); h != 0 {
		t.Fatalf("Headroom with no fleet calls = %v, want 0", h)
	}
}

// A Window that Buckets divides slides in steps of exactly Window/Buckets:
// a retry counts against the floor for Window, not one step more; the
// first step starts at New.
func TestWindowAMultipleOfBuckets(t *testing.T) {
	clk := clock.NewFake()
	b := New(Config{Reserve: 1, Window: 20, Clock: clk}) // steps of 2ns
	m := NewMemStore(20, clk)
	ctx := context.Background()
	if !b.Withdraw() {
		t.Fatal("the floor's first retry denied")
	}
	if c, r, _ := m.Add(ctx, 1, 1); c != 1 || r != 1 {
		t.Fatalf("Add = %d, %d; want 1, 1", c, r)
	}
	clk.Advance(19)
	if b.Withdraw() {
		t.Fatal("a retry granted within Window of the floor's retry")
	}
	if c, r, _ := m.Add(ctx, 0, 0); c != 1 || r != 1 {
		t.Fatalf("within the window: totals %d, %d; want 1, 1", c, r)
	}
	clk.Advance(1)
	if !b.Withdraw() {
		t.Fatal("no retry granted once Window passed")
	}
	if c, r, _ := m.Add(ctx, 0, 0); c != 0 || r != 0 {
		t.Fatalf("once Window passed: totals %d, %d; want 0, 0", c, r)
	}
}

// With Window/Buckets of 1ns, what is counted at New's instant leaves the
// window exactly Window later.
func TestWindowOfOneNanosecondSteps(t *testing.T) {
	clk := clock.NewFake()
	b := New(Config{Reserve: 1, Window: 10, Clock: clk})
	m := NewMemStore(10, clk)
	ctx := context.Background()
	b.Withdraw()
	m.Add(ctx, 1, 1)
	clk.Advance(10)
	if !b.Withdraw() {
		t.Fatal("the floor's retry of time 0 still counted at Window")
	}
	if c, r, _ := m.Add(ctx, 0, 0); c != 0 || r != 0 {
		t.Fatalf("the counts of time 0 still in the totals at Window: %d, %d", c, r)
	}
}

// The floor grants Reserve retries whatever the ratio, with no execution
// and no view of the fleet.
func TestFloorWithARatio(t *testing.T) {
	b := New(Config{Ratio: 0.5, Reserve: 3, Window: time.Second, Clock: clock.NewFake()})
	var got int
	for range 5 {
		if b.Withdraw() {
			got++
		}
	}
	if got != 3 {
		t.Fatalf("granted %d of 5 with no execution, want the floor, 3", got)
	}
}

// The retries of a flush not yet answered still count: between Take and
// Settle the instance grants no more than Ratio × its executions.
func TestRetriesInFlightCount(t *testing.T) {
	b := New(Config{Ratio: 1, Window: time.Second, Clock: clock.NewFake()})
	b.Deposit()
	b.Deposit()
	if first, second := b.Withdraw(), b.Withdraw(); !first || !second {
		t.Fatal("retries within Ratio × executions denied")
	}
	if c, r := b.Take(); c != 2 || r != 2 {
		t.Fatalf("Take = %d, %d; want 2, 2", c, r)
	}
	if b.Withdraw() {
		t.Fatal("a third retry for two executions granted while their flush is in flight")
	}
}

// Settle replaces the counts in flight by the fleet's totals: they are not
// counted twice, and the headroom is what is left.
func TestSettleEndsTheFlight(t *testing.T) {
	b := New(Config{Ratio: 1, Window: time.Second, Clock: clock.NewFake()})
	b.Deposit()
	b.Deposit()
	b.Take()
	b.Settle(2, 0) // alone in the fleet: headroom 2
	if h := b.Headroom(); h != 2 {
		t.Fatalf("Headroom = %v, want 2", h)
	}
	var got int
	for range 4 {
		if b.Withdraw() {
			got++
		}
	}
	if got != 2 {
		t.Fatalf("granted %d retries after Settle, want the headroom, 2", got)
	}
}

// One fleet call is a fleet: the instance that made it has all the
// headroom.
func TestHeadroomOfOneCall(t *testing.T) {
	b := New(Config{Ratio: 0.5, Window: time.Second, Clock: clock.NewFake()})
	b.Deposit()
	b.Take()
	b.Settle(1, 0)
	if h := b.Headroom(); h != 0.5 {
		t.Fatalf("Headroom = %v, want 0.5", h)
	}
}
