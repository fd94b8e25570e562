package timeout

import (
	"context"
	"time"
)

// ErrTimeout is matched, through errors.Is, by the error a timeout policy
// returns when a call runs out of time. It also matches
// context.DeadlineExceeded, as does that error, so code that checks for the
// standard deadline error keeps working. A call cut short by the caller's
// own context (its cancellation, or a deadline earlier than the timeout)
// returns the caller's error instead, which does not match ErrTimeout.
var ErrTimeout error = &expiredError{}

// expiredError is the error of an expired call, made once per policy so
// that an expiry costs no allocation.
type expiredError struct{ d time.Duration } // d = 0 for ErrTimeout itself

func (e *expiredError) Error() string {
	if e.d == 0 {
		return "timeout: call exceeded its timeout"
	}
	return "timeout: call exceeded " + e.d.String()
}

// Is makes every expiredError match ErrTimeout and context.DeadlineExceeded.
func (e *expiredError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// Timeout reports true, as context.DeadlineExceeded and net.Error timeouts
// do.
func (e *expiredError) Timeout() bool { return true }
