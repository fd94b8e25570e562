package resilience_test

import (
	"errors"
	"fmt"
	"github.com/f0b5b96b/resilience/internal/refusal"
	"strings"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience"
)

type hintError struct{ after time.Duration }

func (e hintError) Error() string             { return fmt.Sprintf("come back in %v", e.after) }
func (e hintError) RetryAfter() time.Duration { return e.after }

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		want   time.Duration
		wantOK bool
	}{
		{"nil", nil, 0, false},
		{"plain", errors.New("x"), 0, false},
		{"direct", hintError{2 * time.Second}, 2 * time.Second, true},
		{"wrapped", fmt.Errorf("call: %w", hintError{time.Second}), time.Second, true},
		{"joined", errors.Join(errors.New("a"), hintError{3 * time.Millisecond}), 3 * time.Millisecond, true},
		{"first in chain wins", fmt.Errorf("%w", hintError{1}), 1, true},
		{"negative is no hint", hintError{-time.Second}, 0, false},
		{"negative is passed over", fmt.Errorf("%w", errors.Join(hintError{-1}, hintError{4})), 4, true},
	}
	for _, tt := range tests {
		d, ok := resilience.RetryAfter(tt.err)
		if d != tt.want || ok != tt.wantOK {
			t.Errorf("%s: RetryAfter = %v, %v; want %v, %v", tt.name, d, ok, tt.want, tt.wantOK)
		}
	}
}

func TestRetryAfterWalksTheTreeDepthFirst(t *testing.T) {
	// errors.Join(a, b) where a wraps no hint and b wraps two: the first hint
	// in depth-first order wins.
	err := errors.Join(
		fmt.Errorf("a: %w", errors.New("no hint")),
		fmt.Errorf("b: %w", errors.Join(hintError{5}, hintError{6})),
	)
	if d, ok := resilience.RetryAfter(err); d != 5 || !ok {
		t.Errorf("RetryAfter = %v, %v; want 5ns, true", d, ok)
	}
}

func TestRetryAfterDoesNotAllocate(t *testing.T) {
	err := fmt.Errorf("outer: %w", errors.Join(errors.New("x"), &ptrHint{time.Second}))
	if n := testing.AllocsPerRun(100, func() { _, _ = resilience.RetryAfter(err) }); n != 0 {
		t.Errorf("RetryAfter allocates %v times per call, want 0", n)
	}
}

type ptrHint struct{ after time.Duration }

func (e *ptrHint) Error() string             { return "hint" }
func (e *ptrHint) RetryAfter() time.Duration { return e.after }

var errTestFull = refusal.New("guard: full", nil)

func TestRefuse(t *testing.T) {
	tests := []struct {
		name      string
		err       *resilience.RefusedError
		wantMsg   string
		wantAfter time.Duration
		wantOK    bool
	}{
		{"hint", resilience.Refuse(errTestFull, "db", 2*time.Second), "guard: full (db), retry after 2s", 2 * time.Second, true},
		{"zero hint", resilience.Refuse(errTestFull, "db", 0), "guard: full (db), retry after 0s", 0, true},
		{"never", resilience.Refuse(errTestFull, "", resilience.Never), "guard: full, retry never", resilience.Never, true},
		{"no hint", resilience.Refuse(errTestFull, "db", -1), "guard: full (db)", -1, false},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.wantMsg {
			t.Errorf("%s: Error() = %q, want %q", tt.name, got, tt.wantMsg)
		}
		wrapped := fmt.Errorf("call: %w", tt.err)
		if !errors.Is(wrapped, errTestFull) || !errors.Is(wrapped, resilience.ErrRefused) {
			t.Errorf("%s: errors.Is(sentinel), errors.Is(ErrRefused) = %v, %v; want true, true", tt.name, errors.Is(wrapped, errTestFull), errors.Is(wrapped, resilience.ErrRefused))
		}
		if got := tt.err.RetryAfter(); got != tt.wantAfter {
			t.Errorf("%s: RetryAfter() = %v, want %v", tt.name, got, tt.wantAfter)
		}
		if d, ok := resilience.RetryAfter(wrapped); d != max(tt.wantAfter, 0) || ok != tt.wantOK {
			t.Errorf("%s: RetryAfter = %v, %v; want %v, %v", tt.name, d, ok, max(tt.wantAfter, 0), tt.wantOK)
		}
		var re *resilience.RefusedError
		if !errors.As(wrapped, &re) || re.Name() != tt.err.Name() || re.Reason() != errTestFull {
			t.Errorf("%s: errors.As gave %v; want the refusal with its name and reason", tt.name, re)
		}
	}
}

func TestRetryAfterPassesOverAHintlessRefusal(t *testing.T) {
	// A hintless refusal that wraps (through its reason) nothing with a
	// hint, joined with a hint: the hint is found.
	err := errors.Join(resilience.Refuse(errTestFull, "db", -1), hintError{time.Second})
	if d, ok := resilience.RetryAfter(err); d != time.Second || !ok {
		t.Errorf("RetryAfter = %v, %v; want 1s, true", d, ok)
	}
}

func TestRefusePanics(t *testing.T) {
	for _, reason := range []error{nil, errors.New("not a refusal")} {
		func() {
			defer func() {
				msg, _ := recover().(string)
				if !strings.HasPrefix(msg, "resilience: Refuse reason must match ErrRefused, got ") {
					t.Errorf("Refuse(%v) panic = %q; want one naming the reason", reason, msg)
				}
			}()
			resilience.Refuse(reason, "x", 0)
		}()
	}
}

func TestSentinelsCompareByIdentity(t *testing.T) {
	// Two sentinels with the same text are different conditions.
	same := refusal.New("guard: full", nil)
	if errors.Is(resilience.Refuse(errTestFull, "", -1), same) {
		t.Error("a refusal matched another sentinel of the same text")
	}
}

func TestRefusedErrorIsItsReasonAndUnwrapsToItsParents(t *testing.T) {
	child := refusal.New("guard: full, queue wait ran out", errTestFull)
	err := resilience.Refuse(child, "db", -1)
	// Is answers for the reason alone; the parents match through Unwrap.
	if !err.Is(child) || err.Is(errTestFull) || err.Is(resilience.ErrRefused) {
		t.Errorf("Is(reason), Is(parent), Is(ErrRefused) = %v, %v, %v; want true, false, false", err.Is(child), err.Is(errTestFull), err.Is(resilience.ErrRefused))
	}
	for _, target := range []error{child, errTestFull, resilience.ErrRefused} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(refusal, %q) = false, want true", target)
		}
	}
	if errors.Is(resilience.Refuse(errTestFull, "db", -1), child) {
		t.Error("a refusal for a parent sentinel matches its child")
	}
}

// BenchmarkErrorsIsReason is the check a caller makes of a refusal:
// errors.Is against the guard's sentinel.
func BenchmarkErrorsIsReason(b *testing.B) {
	var err error = resilience.Refuse(errTestFull, "db", time.Second)
	b.ReportAllocs()
	for b.Loop() {
		if !errors.Is(err, errTestFull) {
			b.Fatal("no match")
		}
	}
}
