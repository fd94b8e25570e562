package ratelimit_test

import (
	"sync"
	"testing"

	"github.com/f0b5b96b/resilience/internal/testwait"
)

// Every test here that waits bounds its wait and fails with a message
// (internal/testwait): a wait on a channel in a synctest bubble is reported
// as a deadlock at once; a wait outside a bubble selects on a real-time
// guard; and a bubble runs under a watchdog, since a goroutine stuck on a
// mutex or spinning in a loop is not durably blocked.

const patience = testwait.BubblePatience

func bubble(t *testing.T, f func(t *testing.T)) { t.Helper(); testwait.Bubble(t, f) }

func waitAll(t *testing.T, wg *sync.WaitGroup, what string) { t.Helper(); testwait.Wait(t, wg, what) }

// returns runs f and returns its result, failing the test if f has not
// returned within liveness: every call made through it returns at once by
// the documentation (a refusal, a token that is there), so a bound for
// failure only, far above the microseconds it takes.
func returns[V any](t *testing.T, what string, f func() V) V {
	t.Helper()
	done := make(chan V, 1)
	go func() { done <- f() }()
	return testwait.RecvFor(t, done, liveness, what)
}
