package resilienceredis_test

import (
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/resilienceredis/internal/apishape"
)

// The module's exported API has the shape every package of the repository
// shares (see package apishape for the rules); its exemptions give their
// reasons.
func TestAPIShape(t *testing.T) {
	problems, err := apishape.Check(apishape.Rules{
		Dir:    ".",
		Guards: map[string][]string{".": {"Limiter", "KeyedLimiter", "Breaker", "RetryBudget"}},
		Exempt: map[string]string{
			"WithName":     "the name is positional in NewLimiter, NewKeyedLimiter, NewBreaker, NewRetryBudget and NewCacheStore: it is required, the identity of the state the fleet shares",
			"WithClock":    "the fleet guards read Redis's clock (TIME in their scripts), one clock for the whole fleet; an instance's own would disagree with the others'",
			"WithFallback": "one token bucket, each instance's own while Redis is unreachable: its rate and burst are one concept, as NewLimiter's rate and burst are",
			"WaitPolicy":   "a variant of LimiterPolicy for the same guard (it waits for a token instead of refusing), not another guard",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("the API does not have its shape:\n%s", strings.Join(problems, "\n"))
	}
}
