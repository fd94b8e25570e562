// Quickstart is the README's quick start as a program: a price lookup
// guarded by fallback > retry > breaker > timeout, against a pricing service
// that is down. The third call fails fast: the breaker is open, and the
// retry returns its refusal at once rather than wait out the cooldown, so
// the fallback answers without calling pricing. Run it with
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

func run(w io.Writer) {
	// One breaker per dependency, shared by every call to it.
	pricing := breaker.New(breaker.WithName("pricing"), breaker.WithCooldown(time.Second))

	// One pipeline, composed once, outermost first.
	pricePolicy := resilience.Then(
		resilience.Fallback(func(ctx context.Context, err error) (float64, error) {
			return 9.99, nil // the last known price, when all else failed
		}),
		retry.New[float64](retry.WithMaxElapsed(2*time.Second)), // 3 attempts, backoff with full jitter, 2 s in all
		breaker.Policy[float64](pricing),                        // trips after 5 failures in a row, open for 1 s
		timeout.New[float64](200*time.Millisecond),              // each attempt
	)

	// The business function keeps its shape: func(ctx, string) (float64, error).
	getPrice := resilience.Guard(pricePolicy, fetchPrice)
	for range 3 {
		calls.Store(0)
		price, err := getPrice(context.Background(), "sku-42")
		fmt.Fprintf(w, "price %.2f, err %v; pricing called %d times; breaker %s\n", price, err, calls.Load(), pricing.State())
	}
}

// fetchPrice is the call to the dependency, which is down.
func fetchPrice(ctx context.Context, sku string) (float64, error) {
	calls.Add(1)
	return 0, errors.New("pricing: 503 Service Unavailable")
}

var calls atomic.Int64 // calls that reached the dependency

func main() { run(os.Stdout) }
