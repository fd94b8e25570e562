package refusal_test

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/refusal"
)

func TestSentinel(t *testing.T) {
	full := refusal.New("guard: full", nil)
	if full.Error() != "guard: full" || !errors.Is(full, resilience.ErrRefused) {
		t.Errorf("Sentinel = %q, errors.Is(ErrRefused) = %v; want %q, true", full, errors.Is(full, resilience.ErrRefused), "guard: full")
	}
	if errors.Is(full, refusal.New("guard: full", nil)) {
		t.Error("two sentinels of the same message match each other: they must compare by identity")
	}
	timedOut := refusal.New("guard: full, queue wait ran out", full)
	if !errors.Is(timedOut, full) || !errors.Is(timedOut, resilience.ErrRefused) {
		t.Error("a child sentinel does not match its parent and ErrRefused")
	}
	if errors.Is(full, timedOut) {
		t.Error("a parent sentinel matches its child")
	}
}
