package refusal_test

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/refusal"
)

func TestSentinel(t *testing.T) {
	var err error = refusal.Sentinel("guard: full")
	if err.Error() != "guard: full" || !errors.Is(err, resilience.ErrRefused) {
		t.Errorf("Sentinel = %q, errors.Is(ErrRefused) = %v; want %q, true", err, errors.Is(err, resilience.ErrRefused), "guard: full")
	}
	if errors.Is(err, refusal.Sentinel("guard: other")) {
		t.Error("two sentinels of different messages match each other")
	}
}
