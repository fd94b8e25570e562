package bulkhead_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
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
	fake := clock.NewFake() // with MaxWait, the example can see the caller queue
	b := bulkhead.New(1, bulkhead.WithMaxQueue(5), bulkhead.WithMaxWait(time.Minute), bulkhead.WithClock(fake))
	_ = b.Acquire(context.Background())

	got := make(chan error)
	go func() { got <- b.Acquire(context.Background()) }()
	_ = fake.BlockUntil(context.Background(), 1) // the caller is queued
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
	fake := clock.NewFake()
	b := bulkhead.New(1, bulkhead.WithMaxQueue(5), bulkhead.WithMaxWait(100*time.Millisecond),
		bulkhead.WithClock(fake), bulkhead.WithName("db"))
	_ = b.Acquire(context.Background())

	got := make(chan error)
	go func() { got <- b.Acquire(context.Background()) }()
	_ = fake.BlockUntil(context.Background(), 1) // the caller is queued
	fake.Advance(100 * time.Millisecond)
	fmt.Println(<-got)
	// Output: bulkhead: full (db) after waiting 100ms in the queue
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
	b := bulkhead.New(c.MaxConcurrent, bulkhead.WithConfig(c))
	fmt.Println(b.InFlight())
	// Output:
	// bulkhead: MaxQueue must be between 0 and 2147483647, got -1
	// 0
}

func ExampleFullError() {
	b := bulkhead.New(1, bulkhead.WithName("search"))
	_ = b.TryAcquire()
	var fe *bulkhead.FullError
	if errors.As(b.Acquire(context.Background()), &fe) {
		fmt.Println("refused by", fe.Name)
	}
	// Output: refused by search
}
