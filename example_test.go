package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/backoff"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/retry"
)

// logged is a small policy of our own: it prints what passes through it.
func logged[T any](name string) resilience.Policy[T] {
	return resilience.New(name, func(ctx context.Context, next resilience.Next[T]) (T, error) {
		fmt.Println(name, "in")
		v, err := next.Call(ctx)
		fmt.Println(name, "out:", v, err)
		return v, err
	})
}

func Example() {
	// A pipeline is composed once, outermost first, and shared.
	pipeline := logged[string]("outer").
		Then(logged[string]("inner")).
		Fallback(func(ctx context.Context, err error) (string, error) {
			return "cached price", nil
		})

	price, err := pipeline.Do(context.Background(), func(ctx context.Context) (string, error) {
		return "", errors.New("pricing service unavailable")
	})
	fmt.Println(price, err)
	// Output:
	// outer in
	// inner in
	// inner out:  pricing service unavailable
	// outer out:  pricing service unavailable
	// cached price <nil>
}

func ExampleNew() {
	// A policy that refuses calls outside business hours, written the way the
	// built-in policies are: it calls next.Call to go on, or returns to refuse.
	open := false
	hours := resilience.New("business-hours", func(ctx context.Context, next resilience.Next[int]) (int, error) {
		if !open {
			return 0, errors.New("closed for the night")
		}
		return next.Call(ctx)
	})
	op := func(context.Context) (int, error) { return 200, nil }

	fmt.Println(hours.Do(context.Background(), op))
	open = true
	fmt.Println(hours.Do(context.Background(), op))
	// Output:
	// 0 closed for the night
	// 200 <nil>
}

func ExampleNext_Call() {
	// A layer may call next more than once: here, a naive "try twice".
	twice := resilience.New("twice", func(ctx context.Context, next resilience.Next[string]) (string, error) {
		v, err := next.Call(ctx)
		if err != nil {
			return next.Call(ctx)
		}
		return v, err
	})
	attempts := 0
	v, err := twice.Do(context.Background(), func(context.Context) (string, error) {
		attempts++
		if attempts == 1 {
			return "", errors.New("flaky")
		}
		return "ok", nil
	})
	fmt.Println(v, err, attempts)
	// Output: ok <nil> 2
}

func ExampleThen() {
	p := resilience.Then(logged[int]("a"), logged[int]("b"))
	fmt.Println(p)
	_, _ = p.Do(context.Background(), func(context.Context) (int, error) { return 1, nil })
	// Output:
	// a > b
	// a in
	// b in
	// b out: 1 <nil>
	// a out: 1 <nil>
}

func ExamplePolicy_Then() {
	p := logged[int]("retry").Then(logged[int]("breaker"), logged[int]("timeout"))
	fmt.Println(p)
	// Output: retry > breaker > timeout
}

func ExamplePolicy_Fallback() {
	p := logged[string]("guard").Fallback(func(ctx context.Context, err error) (string, error) {
		if strings.Contains(err.Error(), "not found") {
			return "", err // not worth a fallback: return the error again
		}
		return "default", nil
	})
	fmt.Println(p.Do(context.Background(), func(context.Context) (string, error) {
		return "", errors.New("timeout")
	}))
	// Output:
	// guard in
	// guard out:  timeout
	// default <nil>
}

func ExamplePolicy_Do() {
	var identity resilience.Policy[int] // the zero Policy runs the op unchanged
	fmt.Println(identity.Do(context.Background(), func(context.Context) (int, error) { return 42, nil }))
	// Output: 42 <nil>
}

func ExamplePolicy_Wrap() {
	// Compose once, keep the guarded Op, call it many times.
	calls := 0
	fetch := logged[int]("guard").Wrap(func(context.Context) (int, error) {
		calls++
		return calls, nil
	})
	_, _ = fetch(context.Background())
	_, _ = fetch(context.Background())
	// Output:
	// guard in
	// guard out: 1 <nil>
	// guard in
	// guard out: 2 <nil>
}

func ExamplePolicy_String() {
	p := logged[int]("retry").Then(logged[int]("breaker(payments)")).
		Fallback(func(context.Context, error) (int, error) { return 0, nil })
	fmt.Println(p.String())
	// Output: fallback > retry > breaker(payments)
}

type Invoice struct{ ID, Customer string }

func ExampleGuard() {
	getInvoice := func(ctx context.Context, id string) (*Invoice, error) {
		return &Invoice{ID: id, Customer: "ACME"}, nil
	}
	// The guarded function keeps the business function's own shape.
	guarded := resilience.Guard(logged[*Invoice]("guard"), getInvoice)
	inv, err := guarded(context.Background(), "INV-7")
	fmt.Println(inv.ID, inv.Customer, err)
	// Output:
	// guard in
	// guard out: &{INV-7 ACME} <nil>
	// INV-7 ACME <nil>
}

func ExampleGuard2() {
	transfer := func(ctx context.Context, from, to string) (int, error) {
		return 100, nil
	}
	guarded := resilience.Guard2(resilience.Policy[int]{}, transfer)
	fmt.Println(guarded(context.Background(), "alice", "bob"))
	// Output: 100 <nil>
}

func ExampleGuardErr() {
	notify := func(ctx context.Context) error { return errors.New("smtp down") }
	// Calls that return only an error run through any Policy; here one that
	// swallows the failure because a notification may be dropped.
	dropOnFailure := resilience.Policy[struct{}]{}.Fallback(func(ctx context.Context, err error) (struct{}, error) {
		fmt.Println("dropped:", err)
		return struct{}{}, nil
	})
	guarded := resilience.GuardErr(dropOnFailure, notify)
	fmt.Println(guarded(context.Background()))
	// Output:
	// dropped: smtp down
	// <nil>
}

func ExampleAs() {
	// One pipeline for the payments dependency, composed once, shared by call
	// sites with different result types.
	payments := logged[any]("payments")

	inv, _ := resilience.As[*Invoice](payments).Do(context.Background(), func(context.Context) (*Invoice, error) {
		return &Invoice{ID: "INV-1"}, nil
	})
	total, _ := resilience.As[int](payments).Do(context.Background(), func(context.Context) (int, error) {
		return 1200, nil
	})
	fmt.Println(inv.ID, total)
	// Output:
	// payments in
	// payments out: &{INV-1 } <nil>
	// payments in
	// payments out: 1200 <nil>
	// INV-1 1200
}

// throttled is what an HTTP client might return for a 429 with Retry-After.
type throttled struct{ after time.Duration }

func (e *throttled) Error() string             { return "429 Too Many Requests" }
func (e *throttled) RetryAfter() time.Duration { return e.after }

func ExampleRetryAfter() {
	err := fmt.Errorf("get /orders: %w", &throttled{after: 2 * time.Second})
	if d, ok := resilience.RetryAfter(err); ok {
		fmt.Println("come back in", d)
	}
	// Output: come back in 2s
}

func ExampleFallback() {
	// The function form puts a fallback first in a Then list.
	p := resilience.Then(
		resilience.Fallback(func(ctx context.Context, err error) (string, error) { return "stale", nil }),
		logged[string]("guard"),
	)
	fmt.Println(p)
	fmt.Println(p.Do(context.Background(), func(context.Context) (string, error) { return "", errors.New("down") }))
	// Output:
	// fallback > guard
	// guard in
	// guard out:  down
	// stale <nil>
}

// errQuota is the sentinel of a guard of our own: a refusal, so it matches
// resilience.ErrRefused. (This library's guards build theirs the same way.)
var errQuota = fmt.Errorf("quota: used up: %w", resilience.ErrRefused)

func ExampleRefuse() {
	err := resilience.Refuse(errQuota, "tenant-42", 90*time.Second)
	fmt.Println(err)
	fmt.Println(errors.Is(err, errQuota), errors.Is(err, resilience.ErrRefused))

	// Without a hint (a guard that cannot know when to come back):
	noHint := resilience.Refuse(errQuota, "tenant-42", -1)
	_, ok := resilience.RetryAfter(noHint)
	fmt.Println(noHint, ok)
	// Output:
	// quota: used up: resilience: refused (tenant-42), retry after 1m30s
	// true true
	// quota: used up: resilience: refused (tenant-42) false
}

func ExampleRefusedError() {
	var err error = resilience.Refuse(errQuota, "tenant-42", resilience.Never)
	err = fmt.Errorf("charge: %w", err)

	var re *resilience.RefusedError
	if errors.As(err, &re) {
		fmt.Println(re.Name(), re.Reason() == errQuota, re.RetryAfter() == resilience.Never)
	}
	// Output: tenant-42 true true
}

func ExamplePermanent() {
	errBadRequest := errors.New("400 bad request")
	err := fmt.Errorf("charge: %w", resilience.Permanent(errBadRequest))
	fmt.Println(err, resilience.IsPermanent(err), errors.Is(err, errBadRequest))
	// Output: charge: 400 bad request true true
}

func ExampleIsPermanent() {
	fmt.Println(resilience.IsPermanent(errors.New("timeout")))
	fmt.Println(resilience.IsPermanent(resilience.Permanent(errors.New("not found"))))
	// Output:
	// false
	// true
}

// instantClock is a fake clock whose Sleep does not block: it moves the
// fake time on by the wait at once, so an example's waits take no real time.
type instantClock struct{ *clock.Fake }

func (c instantClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}

func ExampleOff() {
	// A zero Config field means its default (Config{Attempts: 0}: 3
	// attempts; an option given 0 panics); Off switches off a setting that
	// is on by default: here the limit on attempts, so the retry goes on
	// until MaxElapsed.
	clk := instantClock{clock.NewFake()}
	start := clk.Now()
	p := retry.New[string](
		retry.WithAttempts(resilience.Off),
		retry.WithMaxElapsed(time.Second),
		retry.WithBackoff(backoff.Constant(300*time.Millisecond)),
		retry.WithClock(clk),
	)
	_, err := p.Do(context.Background(), func(context.Context) (string, error) {
		fmt.Println("attempt at", clk.Now().Sub(start))
		return "", errors.New("503 service unavailable")
	})
	fmt.Println(err)
	// Output:
	// attempt at 0s
	// attempt at 300ms
	// attempt at 600ms
	// attempt at 900ms
	// retry: gave up after 4 attempts (a wait of 300ms would pass MaxElapsed 1s): 503 service unavailable
}
