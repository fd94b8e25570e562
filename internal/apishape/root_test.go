package apishape_test

import (
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/internal/apishape"
)

// RootRules are the root module's guards and exemptions, each with its
// reason.
var rootRules = apishape.Rules{
	Dir: "../..",
	Guards: map[string][]string{
		"policy/adaptive":  {"Limiter"},
		"policy/breaker":   {"Breaker", "Keyed"},
		"policy/bulkhead":  {"Bulkhead"},
		"policy/cache":     {"Cache"},
		"policy/chaos":     {"Injector"},
		"policy/ratelimit": {"Limiter", "Keyed"},
		"policy/throttle":  {"Throttler"},
	},
	Exempt: map[string]string{
		"policy/chaos.WithClock":        "an injector measures no time; the Latency policy takes its clock as an argument",
		"policy/cache.Stats.Refused":    "a cache refuses nothing: a call it cannot answer goes through to the dependency",
		"policy/ratelimit.WaitPolicy":   "a variant of Policy for the same guard (waits for a token instead of refusing), not another guard",
		"resiliencehttp.WithKeyedLimit": "one keyed limit: the key function and the limiter whose buckets it names mean nothing apart",
	},
}

// The root module's exported API has the shape every package shares (see
// package apishape for the rules).
func TestRootModuleShape(t *testing.T) {
	problems, err := apishape.Check(rootRules)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("the API does not have its shape:\n%s", strings.Join(problems, "\n"))
	}
}
