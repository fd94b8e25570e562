package backoff_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience/backoff"
)

// printDelays prints the first n delays of a fresh execution of s, rounded
// to the millisecond.
func printDelays(s backoff.Schedule, n int) {
	q := s.Start()
	ds := make([]string, n)
	for i := range ds {
		ds[i] = q.Next().Round(time.Millisecond).String()
	}
	fmt.Println(strings.Join(ds, " "))
}

func ExampleConstant() {
	s := backoff.Constant(500 * time.Millisecond)
	fmt.Println(s)
	printDelays(s, 4)
	// Output:
	// constant(500ms)
	// 500ms 500ms 500ms 500ms
}

func ExampleLinear() {
	s := backoff.Linear(100*time.Millisecond, 50*time.Millisecond, 300*time.Millisecond)
	fmt.Println(s)
	printDelays(s, 7)
	// Output:
	// linear(100ms+50ms, max 300ms)
	// 100ms 150ms 200ms 250ms 300ms 300ms 300ms
}

func ExampleExponential() {
	s := backoff.Exponential(100*time.Millisecond, 2, time.Second)
	fmt.Println(s, "max", s.Max())
	printDelays(s, 7)
	// Output:
	// exponential(100ms×2, max 1s) max 1s
	// 100ms 200ms 400ms 800ms 1s 1s 1s
}

func ExampleSchedule_WithJitter() {
	s := backoff.Exponential(100*time.Millisecond, 2, time.Second)
	for _, j := range []backoff.Jitter{backoff.None, backoff.Full, backoff.Equal, backoff.Decorrelated} {
		// A seeded source makes the output reproducible; production code
		// usually keeps the default source.
		r := rand.New(rand.NewPCG(1, 2))
		sj := s.WithJitter(j).WithRand(r)
		fmt.Printf("%-14s", j.String()+":")
		printDelays(sj, 6)
	}
	// Output:
	// none:         100ms 200ms 400ms 800ms 1s 1s
	// full:         77ms 123ms 314ms 637ms 234ms 41ms
	// equal:        88ms 162ms 357ms 719ms 617ms 521ms
	// decorrelated: 254ms 508ms 1s 1s 779ms 192ms
}

func ExampleSchedule_Start() {
	s := backoff.Exponential(10*time.Millisecond, 3, time.Second)
	errTransient := errors.New("transient")
	calls := 0
	op := func() error {
		if calls++; calls < 4 {
			return errTransient
		}
		return nil
	}

	q := s.Start() // one Sequence per execution
	for err := op(); err != nil; err = op() {
		d := q.Next()
		fmt.Printf("attempt %d failed: %v; retrying in %v\n", calls, err, d)
		// time.Sleep(d)
	}
	fmt.Println("attempt", calls, "succeeded")
	// Output:
	// attempt 1 failed: transient; retrying in 10ms
	// attempt 2 failed: transient; retrying in 30ms
	// attempt 3 failed: transient; retrying in 90ms
	// attempt 4 succeeded
}

func ExampleSchedule_Delays() {
	s := backoff.Linear(time.Second, time.Second, 3*time.Second)
	retries := 0
	for d := range s.Delays() { // infinite: break out
		fmt.Println(d)
		if retries++; retries == 5 {
			break
		}
	}
	// Output:
	// 1s
	// 2s
	// 3s
	// 3s
	// 3s
}

func ExampleSchedule_WithRand() {
	s := backoff.Constant(time.Second).WithJitter(backoff.Full)
	a := s.WithRand(rand.New(rand.NewPCG(7, 7)))
	b := s.WithRand(rand.New(rand.NewPCG(7, 7)))
	qa, qb := a.Start(), b.Start()
	for range 3 {
		fmt.Println(qa.Next() == qb.Next())
	}
	// Output:
	// true
	// true
	// true
}

// Max bounds every delay, jittered or not, and so the total wait of a
// number of retries; a Max of 0 means no wait at all.
func ExampleSchedule_Max() {
	for _, s := range []backoff.Schedule{
		backoff.Exponential(100*time.Millisecond, 2, 2*time.Second).WithJitter(backoff.Full),
		backoff.Linear(time.Second, time.Second, 3*time.Second),
		{},
	} {
		fmt.Printf("max %v: 5 retries wait at most %v\n", s.Max(), 5*s.Max())
	}
	// Output:
	// max 2s: 5 retries wait at most 10s
	// max 3s: 5 retries wait at most 15s
	// max 0s: 5 retries wait at most 0s
}

// String describes the schedule (not its random source), for logs.
func ExampleSchedule_String() {
	fmt.Println(backoff.Schedule{})
	fmt.Println(backoff.Constant(0))
	fmt.Println(backoff.Linear(100*time.Millisecond, 50*time.Millisecond, time.Second))
	fmt.Println(backoff.Exponential(100*time.Millisecond, 1.5, 10*time.Second).WithJitter(backoff.Equal))
	// Output:
	// unset
	// constant(0s)
	// linear(100ms+50ms, max 1s)
	// exponential(100ms×1.5, max 10s, equal jitter)
}

func ExampleJitter_String() {
	for _, j := range []backoff.Jitter{backoff.None, backoff.Full, backoff.Equal, backoff.Decorrelated, 9} {
		fmt.Print(j, " ")
	}
	fmt.Println()
	// Output: none full equal decorrelated Jitter(9)
}

// Each execution walks the schedule with its own Sequence: Next advances
// only that one, and a new Sequence starts over from the first delay.
func ExampleSequence_Next() {
	s := backoff.Exponential(time.Second, 2, time.Minute)
	a := s.Start()
	fmt.Println(a.Next(), a.Next(), a.Next())
	b := s.Start() // another execution
	fmt.Println(b.Next(), a.Next())

	var zero backoff.Sequence // as if started from the zero Schedule
	fmt.Println(zero.Next())
	// Output:
	// 1s 2s 4s
	// 1s 8s
	// 0s
}

// A schedule in a configuration file: MarshalJSON writes it, UnmarshalJSON
// reads it back through the same constructor and its checks.
func ExampleSchedule_MarshalJSON() {
	s := backoff.Exponential(100*time.Millisecond, 2, 10*time.Second).WithJitter(backoff.Full)
	data, _ := json.Marshal(s)
	fmt.Println(string(data))

	var back backoff.Schedule
	err := json.Unmarshal([]byte(`{"Kind":"linear","Base":"1s","Step":"500ms","Max":"5s"}`), &back)
	fmt.Println(back, err)
	err = json.Unmarshal([]byte(`{"Kind":"exponential","Base":"1s","Multiplier":0.5,"Max":"5s"}`), &back)
	fmt.Println(err)
	// Output:
	// {"Kind":"exponential","Base":"100ms","Multiplier":2,"Max":"10s","Jitter":"full"}
	// linear(1s+500ms, max 5s) <nil>
	// backoff: Exponential multiplier must be >= 1, got 0.5
}

func ExampleSchedule_UnmarshalJSON() {
	var cfg struct{ Backoff backoff.Schedule }
	err := json.Unmarshal([]byte(`{"Backoff": {"Kind": "constant", "Base": "250ms"}}`), &cfg)
	fmt.Println(cfg.Backoff, err)
	// Output: constant(250ms) <nil>
}

func ExampleSchedule_IsZero() {
	fmt.Println(backoff.Schedule{}.IsZero(), backoff.Constant(0).IsZero())
	// Output: true false
}
