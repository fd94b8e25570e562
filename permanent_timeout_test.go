package resilience_test

import (
	"errors"
	"testing"

	"github.com/f0b5b96b/resilience"
)

type timeoutErr bool

func (e timeoutErr) Error() string { return "timeout?" }
func (e timeoutErr) Timeout() bool { return bool(e) }

// A Permanent error's Timeout reports its error's: false for an error
// without a Timeout method, and what the method says for one with it.
func TestPermanentTimeoutFollowsItsError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{errors.New("plain"), false},
		{timeoutErr(false), false},
		{timeoutErr(true), true},
	} {
		tm, ok := resilience.Permanent(tc.err).(interface{ Timeout() bool })
		if !ok {
			t.Fatalf("Permanent(%v) has no Timeout method", tc.err)
		}
		if got := tm.Timeout(); got != tc.want {
			t.Errorf("Permanent(%#v).Timeout() = %v, want %v", tc.err, got, tc.want)
		}
	}
}
