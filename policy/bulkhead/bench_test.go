package bulkhead_test

import (
	"context"
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
)

// refusals returns a refusal at once (ErrFull) and one after MaxWait in the
// queue (ErrQueueTimeout, a child of ErrFull), both as a caller gets them,
// wrapped once more by the caller's own code.
func refusals() (full, timedOut error) {
	b := bulkhead.New(1, bulkhead.WithName("db"))
	_ = b.TryAcquire()
	full = fmtWrap(b.Acquire(context.Background()))
	timedOut = fmtWrap(resilience.Refuse(bulkhead.ErrQueueTimeout, "db", -1))
	return full, timedOut
}

// fmtWrap wraps err as fmt.Errorf("...: %w", err) does, without fmt.
func fmtWrap(err error) error { return &wrapped{err} }

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "query: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

// errors.Is on a refusal walks pointers and compares sentinels by identity:
// it allocates nothing.
func TestErrorsIsRefusalAllocatesNothing(t *testing.T) {
	full, timedOut := refusals()
	for name, f := range map[string]func() bool{
		"ErrFull":            func() bool { return errors.Is(full, bulkhead.ErrFull) },
		"ErrRefused":         func() bool { return errors.Is(full, resilience.ErrRefused) },
		"ErrQueueTimeout":    func() bool { return errors.Is(timedOut, bulkhead.ErrQueueTimeout) },
		"ErrFull of timeout": func() bool { return errors.Is(timedOut, bulkhead.ErrFull) },
		"no match":           func() bool { return !errors.Is(full, bulkhead.ErrQueueTimeout) },
	} {
		if !f() {
			t.Errorf("%s: errors.Is gave the wrong answer", name)
		}
		if n := testing.AllocsPerRun(100, func() { f() }); n != 0 {
			t.Errorf("%s: %v allocs, want 0", name, n)
		}
	}
}

// BenchmarkErrorsIsRefusal is the cost of telling a refusal apart, as a
// caller does: errors.Is on the refusal, wrapped once by the caller, against
// the guard's sentinel, resilience.ErrRefused, a parent sentinel, and one
// that does not match (the whole tree is walked). "plain sentinel" is
// errors.Is on a bare errors.New sentinel wrapped the same way, as a
// library whose refusals are plain sentinels (gobreaker.ErrOpenState)
// gives: the floor.
func BenchmarkErrorsIsRefusal(b *testing.B) {
	full, timedOut := refusals()
	plain := errors.New("breaker: open")
	plainWrapped := fmtWrap(plain)
	for _, c := range []struct {
		name        string
		err, target error
		want        bool
	}{
		{"ErrFull", full, bulkhead.ErrFull, true},
		{"ErrRefused", full, resilience.ErrRefused, true},
		{"ErrQueueTimeout/ErrFull", timedOut, bulkhead.ErrFull, true},
		{"no match", full, context.Canceled, false},
		{"plain sentinel", plainWrapped, plain, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if errors.Is(c.err, c.target) != c.want {
					b.Fatal("errors.Is gave the wrong answer")
				}
			}
		})
	}
}
