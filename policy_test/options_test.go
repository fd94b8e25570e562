package policytest

import (
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// A nil option panics at construction with a message naming the package and
// the option, in every policy, not with a nil dereference.
func TestNilOptionPanicsWithAMessage(t *testing.T) {
	for _, c := range []struct {
		want  string
		build func()
	}{
		{"breaker: New option must not be nil", func() { breaker.New(nil) }},
		{"bulkhead: New option must not be nil", func() { bulkhead.New(1, nil) }},
		{"ratelimit: option must not be nil", func() { ratelimit.New(1, 1, nil) }},
		{"ratelimit: option must not be nil", func() { ratelimit.NewKeyed[string](1, 1, nil) }},
		{"retry: New option must not be nil", func() { retry.New[int](nil) }},
		{"timeout: New option must not be nil", func() { timeout.New[int](time.Second, nil) }},
		{"hedge: New option must not be nil", func() { hedge.New[int](time.Second, nil) }},
	} {
		got := func() (msg string) {
			defer func() { msg = fmt.Sprint(recover()) }()
			c.build()
			return "no panic"
		}()
		if got != c.want {
			t.Errorf("panic %q, want %q", got, c.want)
		}
	}
}
