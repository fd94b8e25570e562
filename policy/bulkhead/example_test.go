package bulkhead_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/telemetry"
)

// At most two calls run at once; a third caller is refused at once.
func ExampleNew() {
	b := bulkhead.New(2, bulkhead.WithName("db"))
	ctx := context.Background()
	fmt.Println(b.Acquire(ctx), b.Acquire(ctx))
	err := b.Acquire(ctx)
	fmt.Println(err)
	fmt.Println(errors.Is(err, bulkhead.ErrFull), errors.Is(err, resilience.ErrRefused))
	// Output:
	// <nil> <nil>
	// bulkhead: full (db)
	// true true
}

// Code that calls the dependency itself takes a slot and gives it back
// with defer, so that a panic gives it back too.
func ExampleBulkhead_Acquire() {
	b := bulkhead.New(10)
	query := func(ctx context.Context) error {
		if err := b.Acquire(ctx); err != nil {
			return err // refused, or ctx ended while queued
		}
		defer b.Release()
		fmt.Println("querying with", b.InFlight(), "slot(s) held")
		return nil
	}
	fmt.Println(query(context.Background()))
	// Output:
	// querying with 1 slot(s) held
	// <nil>
}

// When the slots are taken, a caller waits in the queue until one comes
// back.
func ExampleWithMaxQueue() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // bounds every wait below
	defer cancel()
	fake := clock.NewFake() // with MaxWait, the example can see the caller queue
	b := bulkhead.New(1, bulkhead.WithMaxQueue(5), bulkhead.WithMaxWait(time.Minute), bulkhead.WithClock(fake))
	_ = b.Acquire(ctx)

	got := make(chan error)
	go func() { got <- b.Acquire(ctx) }()
	_ = fake.BlockUntil(ctx, 1) // the caller is queued
	fmt.Println("queued:", b.Queued())
	b.Release() // the slot goes straight to the first in line
	fmt.Println(<-got, "in flight:", b.InFlight())
	b.Release()
	// Output:
	// queued: 1
	// <nil> in flight: 1
}

// A caller waits at most MaxWait in the queue.
func ExampleWithMaxWait() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // bounds every wait below
	defer cancel()
	fake := clock.NewFake()
	b := bulkhead.New(1, bulkhead.WithMaxQueue(5), bulkhead.WithMaxWait(100*time.Millisecond),
		bulkhead.WithClock(fake), bulkhead.WithName("db"))
	_ = b.Acquire(ctx)

	got := make(chan error)
	go func() { got <- b.Acquire(ctx) }()
	_ = fake.BlockUntil(ctx, 1) // the caller is queued
	fake.Advance(100 * time.Millisecond)
	fmt.Println(<-got)
	// Output: bulkhead: full, MaxWait spent in the queue (db)
}

func ExampleBulkhead_TryAcquire() {
	b := bulkhead.New(1)
	fmt.Println(b.TryAcquire(), b.TryAcquire())
	b.Release()
	fmt.Println(b.TryAcquire())
	// Output:
	// true false
	// true
}

func ExampleBulkhead_InFlight() {
	b := bulkhead.New(3)
	_ = b.TryAcquire()
	_ = b.TryAcquire()
	fmt.Println(b.InFlight(), b.Queued())
	// Output: 2 0
}

// One bulkhead guards a dependency for call sites of every result type.
func ExamplePolicy() {
	db := bulkhead.New(20, bulkhead.WithMaxQueue(100), bulkhead.WithName("db"))
	users := bulkhead.Policy[[]string](db)
	count := bulkhead.Policy[int](db)
	fmt.Println(users, count)

	names, err := users.Do(context.Background(), func(ctx context.Context) ([]string, error) {
		return []string{"ada", "grace"}, nil
	})
	fmt.Println(names, err, db.InFlight())
	// Output:
	// bulkhead(db) bulkhead(db)
	// [ada grace] <nil> 0
}

// A configuration read at run time is checked with Validate before use.
func ExampleConfig_Validate() {
	c := bulkhead.Config{MaxConcurrent: 8, MaxQueue: -1}
	fmt.Println(c.Validate())
	c.MaxQueue = 16
	fmt.Println(c.Validate())
	// Output:
	// bulkhead: MaxQueue must be between 0 (no queue) and 2147483647, got -1
	// <nil>
}

// A service reads its bulkheads' settings from a JSON file, checks them,
// and builds each bulkhead with its own defaults in code: what the file
// leaves out (here the DB's MaxConcurrent) keeps the value given to New.
func ExampleConfig_json() {
	data, err := os.ReadFile("testdata/config.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	var file struct{ Search, DB bulkhead.Config }
	if err := json.Unmarshal(data, &file); err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range []bulkhead.Config{file.Search, file.DB} {
		if err := c.Validate(); err != nil {
			fmt.Println(err)
			return
		}
	}
	search := bulkhead.New(1, bulkhead.WithName("search"), bulkhead.WithConfig(file.Search))
	db := bulkhead.New(20, bulkhead.WithName("db"), bulkhead.WithConfig(file.DB))

	slots := func(b *bulkhead.Bulkhead) (n int) { // the slots it grants, up to 100
		for n < 100 && b.TryAcquire() {
			n++
		}
		return n
	}
	fmt.Println(bulkhead.Policy[int](search), slots(search))
	fmt.Println(bulkhead.Policy[int](db), slots(db))

	out, _ := json.Marshal(file.Search)
	fmt.Println(string(out))
	// Output:
	// bulkhead(search) 4
	// bulkhead(db) 20
	// {"MaxConcurrent":4,"MaxQueue":8,"MaxWait":"250ms"}
}

// A refusal says which bulkhead refused, and matches ErrFull.
func Example_refusal() {
	b := bulkhead.New(1, bulkhead.WithName("search"))
	_ = b.TryAcquire()
	err := b.Acquire(context.Background())
	var re *resilience.RefusedError
	if errors.As(err, &re) {
		fmt.Println("refused by", re.Name(), errors.Is(err, bulkhead.ErrFull))
	}
	// Output: refused by search true
}

// Queued counts the callers waiting for a slot, for metrics. (With MaxWait
// on a fake clock, the example can see the callers queue.)
func ExampleBulkhead_Queued() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // bounds every wait below
	defer cancel()
	fake := clock.NewFake()
	b := bulkhead.New(1, bulkhead.WithMaxQueue(2), bulkhead.WithMaxWait(time.Second), bulkhead.WithClock(fake))
	_ = b.TryAcquire()
	got := make(chan error)
	for range 2 {
		go func() { got <- b.Acquire(ctx) }()
	}
	_ = fake.BlockUntil(ctx, 2) // both callers are queued
	fmt.Println("in flight:", b.InFlight(), "queued:", b.Queued())
	fmt.Println(b.Acquire(ctx)) // no room left in the queue
	fake.Advance(time.Second)   // both waits run out
	<-got
	<-got
	fmt.Println("queued:", b.Queued())
	// Output:
	// in flight: 1 queued: 2
	// bulkhead: full
	// queued: 0
}

// Release gives a slot back, to the first caller in line or, with nobody
// queued, to the pool. Releasing a slot that is not held panics.
func ExampleBulkhead_Release() {
	b := bulkhead.New(1)
	fmt.Println(b.TryAcquire(), b.TryAcquire())
	b.Release()
	fmt.Println(b.InFlight(), b.TryAcquire())
	b.Release()
	defer func() { fmt.Println("panic:", recover()) }()
	b.Release() // once too many
	// Output:
	// true false
	// 0 true
	// panic: bulkhead: Release without a held slot
}

// The clock times MaxWait: on a fake clock, a queued caller is refused
// only once the fake time has passed MaxWait.
func ExampleWithClock() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // bounds every wait below
	defer cancel()
	fake := clock.NewFake()
	b := bulkhead.New(1, bulkhead.WithMaxQueue(1), bulkhead.WithMaxWait(time.Minute), bulkhead.WithClock(fake))
	_ = b.TryAcquire()
	got := make(chan error)
	go func() { got <- b.Acquire(ctx) }()
	_ = fake.BlockUntil(ctx, 1) // the caller is queued
	fake.Advance(59 * time.Second)
	fmt.Println("queued:", b.Queued())
	fake.Advance(time.Second)
	fmt.Println(<-got)
	// Output:
	// queued: 1
	// bulkhead: full, MaxWait spent in the queue
}

// WithConfig sets the Config's non-zero fields only: New's argument, the
// options before it and the defaults stay unless the Config sets them, and
// options after it change single fields again.
func ExampleWithConfig() {
	b := bulkhead.New(2, bulkhead.WithName("db"), bulkhead.WithConfig(bulkhead.Config{MaxQueue: 1}))
	fmt.Println(b.TryAcquire(), b.TryAcquire(), b.TryAcquire()) // New's 2 slots

	b = bulkhead.New(2, bulkhead.WithConfig(bulkhead.Config{MaxConcurrent: 3, Name: "db"}), bulkhead.WithName("db-replica"))
	fmt.Println(b.TryAcquire(), b.TryAcquire(), b.TryAcquire(), b.TryAcquire()) // the Config's 3
	fmt.Println(b.Acquire(context.Background()))
	// Output:
	// true true false
	// true true true false
	// bulkhead: full (db-replica)
}

// The name appears in the policy layer's name and in refusals.
func ExampleWithName() {
	for _, b := range []*bulkhead.Bulkhead{bulkhead.New(1), bulkhead.New(1, bulkhead.WithName("db"))} {
		_ = b.TryAcquire()
		fmt.Printf("%v: %v\n", bulkhead.Policy[int](b), b.Acquire(context.Background()))
	}
	// Output:
	// bulkhead: bulkhead: full
	// bulkhead(db): bulkhead: full (db)
}

// SetLimit resizes a running bulkhead. Raised, it hands the new slots to
// queued callers at once, in order; lowered, it revokes nothing: the calls
// running finish, and a queued caller gets a slot only once fewer calls
// than the new limit are running.
func ExampleBulkhead_SetLimit() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second) // bounds every wait below
	defer cancel()
	fake := clock.NewFake() // with MaxWait, the example can see the callers queue
	b := bulkhead.New(1, bulkhead.WithMaxQueue(5), bulkhead.WithMaxWait(time.Minute), bulkhead.WithClock(fake))
	_ = b.TryAcquire()
	got := make(chan error)
	for range 3 {
		go func() { got <- b.Acquire(ctx) }()
	}
	_ = fake.BlockUntil(ctx, 3) // three callers queued
	b.SetLimit(3)               // two of them get a slot at once
	fmt.Println(<-got, <-got, "in flight:", b.InFlight(), "queued:", b.Queued())

	b.SetLimit(1) // three calls run on: none is revoked
	b.Release()
	b.Release()
	fmt.Println("in flight:", b.InFlight(), "queued:", b.Queued()) // still one too many for the last caller
	b.Release()
	fmt.Println(<-got, "in flight:", b.InFlight(), "limit:", b.Limit())
	b.Release()
	// Output:
	// <nil> <nil> in flight: 3 queued: 1
	// in flight: 1 queued: 1
	// <nil> in flight: 1 limit: 1
}

// Limit reports the number of slots: MaxConcurrent until SetLimit changes
// it.
func ExampleBulkhead_Limit() {
	b := bulkhead.New(4)
	fmt.Println(b.Limit())
	b.SetLimit(16)
	fmt.Println(b.Limit())
	// Output:
	// 4
	// 16
}

// An observer sees each refusal; a telemetry.Counter counts them per
// bulkhead name.
func ExampleWithObserver() {
	events := telemetry.NewCounter()
	b := bulkhead.New(1, bulkhead.WithName("db"), bulkhead.WithObserver(events))
	ctx := context.Background()
	_ = b.Acquire(ctx)
	fmt.Println(b.Acquire(ctx))
	fmt.Println(b.TryAcquire())
	fmt.Println(events.Count("db", bulkhead.EventRefused))
	// Output:
	// bulkhead: full (db)
	// false
	// 2
}

// Stats reports the limit, the calls holding and waiting for a slot, and
// the refusals since New.
func ExampleBulkhead_Stats() {
	b := bulkhead.New(2, bulkhead.WithName("db"))
	ctx := context.Background()
	_ = b.Acquire(ctx)
	_ = b.Acquire(ctx)
	_ = b.Acquire(ctx) // refused
	fmt.Printf("%+v\n", b.Stats())
	s := b.Snapshot()
	inFlight, _ := s.Value("in_flight")
	fmt.Println(s.Kind, s.Name, s.Refused, inFlight)
	// Output:
	// {Limit:2 InFlight:2 Queued:0 Refused:1}
	// bulkhead db 1 2
}
