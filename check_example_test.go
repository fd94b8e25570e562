package resilience_test

import (
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// Check finds the orders the package documentation warns about: here a
// breaker outside the retry, and one timeout for all attempts. A test of
// the pipeline can assert there are none, and acknowledge an order chosen
// on purpose.
func ExamplePolicy_Check() {
	p := resilience.Then(
		breaker.Policy[string](breaker.New()),
		timeout.New[string](time.Second),
		retry.New[string](),
	)
	for _, f := range p.Check() {
		fmt.Println(f.Code, "at", f.Outer, ">", f.Inner, "; fix:", f.Fix)
	}
	fmt.Println(len(p.Check(resilience.TimeoutOutsideRetry, resilience.BreakerOutsideRetry)), "findings once acknowledged")
	// Output:
	// breaker-outside-retry at breaker > retry ; fix: put the breaker inside the retry
	// timeout-outside-retry at timeout(1s) > retry ; fix: put the timeout inside the retry, to bound each attempt; bound the whole call with the retry's MaxElapsed
	// 0 findings once acknowledged
}

// Bounds works out the worst case of one call from the layers' settings:
// three attempts of at most 200ms, the last starting within MaxElapsed
// (2s), make at most 3 calls in at most 2.2s. Without a timeout, a call to
// a dependency that hangs never ends.
func ExamplePolicy_Bounds() {
	p := resilience.Then(
		retry.New[string](retry.WithMaxElapsed(2*time.Second)),
		breaker.Policy[string](breaker.New()),
		timeout.New[string](200*time.Millisecond),
	)
	fmt.Println(p.Bounds())
	fmt.Println(retry.New[string]().Bounds())
	// Output:
	// at most 3 calls in at most 2.2s
	// at most 3 calls, unbounded duration (no timeout: an op that hangs holds the call)
}
