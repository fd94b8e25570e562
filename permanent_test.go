package resilience_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"testing"

	"github.com/f0b5b96b/resilience"
)

func TestPermanent(t *testing.T) {
	if resilience.Permanent(nil) != nil {
		t.Error("Permanent(nil) != nil")
	}
	base := &fs.PathError{Op: "open", Path: "x", Err: os.ErrDeadlineExceeded}
	err := fmt.Errorf("outer: %w", resilience.Permanent(base))
	if !resilience.IsPermanent(err) {
		t.Error("IsPermanent(wrapped Permanent) = false")
	}
	if resilience.IsPermanent(base) || resilience.IsPermanent(nil) {
		t.Error("IsPermanent of an unmarked error or nil = true")
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) || pe != base {
		t.Error("errors.As does not reach the marked error")
	}
	if got, want := resilience.Permanent(base).Error(), base.Error(); got != want {
		t.Errorf("Permanent(err).Error() = %q, want %q", got, want)
	}
	tm, ok := resilience.Permanent(base).(interface{ Timeout() bool })
	if !ok || !tm.Timeout() {
		t.Error("Permanent does not pass Timeout() through")
	}
	if n := testing.AllocsPerRun(100, func() { _ = resilience.IsPermanent(err) }); n != 0 {
		t.Errorf("IsPermanent allocates %v times, want 0", n)
	}
}
