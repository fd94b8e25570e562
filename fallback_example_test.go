package resilience_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

func ExampleWithFallbackObserver() {
	// Any telemetry.Observer: a Counter for exporters, a telemetry.Slog
	// for logs; here a function that prints each event.
	obs := telemetry.ObserverFunc(func(e telemetry.Event) {
		fmt.Println(e.Type, e.Name, e.Err)
	})
	p := logged[float64]("guard").Fallback(func(ctx context.Context, err error) (float64, error) {
		return 9.5, nil // the last price seen
	}, resilience.WithFallbackName("prices"), resilience.WithFallbackObserver(obs))
	fmt.Println(p)
	fmt.Println(p.Do(context.Background(), func(context.Context) (float64, error) {
		return 0, errors.New("503 busy")
	}))
	// Output:
	// fallback(prices) > guard
	// guard in
	// guard out: 0 503 busy
	// fallback.used prices 503 busy
	// 9.5 <nil>
}

func ExampleWithFallbackName() {
	p := resilience.Fallback(func(context.Context, error) (string, error) { return "stale", nil },
		resilience.WithFallbackName("quotes"))
	fmt.Println(p.Then(logged[string]("retry")))
	// Output: fallback(quotes) > retry
}
