package timeout

import (
	"context"
	"errors"
	"time"
)

// ErrTimeout is matched, through errors.Is, by the error a timeout policy
// returns when a call runs out of time. It also matches
// context.DeadlineExceeded, as does that error, so code that checks for the
// standard deadline error keeps working. When the op returned an error of
// its own after the deadline, the policy's error also wraps it (errors.Is,
// errors.As and resilience.RetryAfter reach it, and a resilience.Permanent
// mark on it still stops a retry). A call cut short by the caller's own context
// (its cancellation, or a deadline earlier than the timeout) returns the
// caller's error instead, which does not match ErrTimeout.
var ErrTimeout error = &expiredError{}

// expiredError is the error of an expired call. The one without err is
// made once per policy, so that an expiry costs no allocation unless the
// op's own error has to be kept.
type expiredError struct {
	d   time.Duration // 0 for ErrTimeout itself
	err error         // the op's error, if it returned one worth keeping
}

func (e *expiredError) Error() string {
	msg := "timeout: call exceeded its timeout"
	if e.d != 0 {
		msg = "timeout: call exceeded " + e.d.String()
	}
	if e.err != nil {
		msg += ": " + e.err.Error()
	}
	return msg
}

// Is makes every expiredError match ErrTimeout and context.DeadlineExceeded.
func (e *expiredError) Is(target error) bool {
	return target == ErrTimeout || target == context.DeadlineExceeded
}

// Unwrap returns the op's error, or nil.
func (e *expiredError) Unwrap() error { return e.err }

// Timeout reports true, as context.DeadlineExceeded and net.Error timeouts
// do.
func (e *expiredError) Timeout() bool { return true }

// expiredWith returns the error of a call that expired and whose op then
// returned err (not nil): expired itself when err is the bare context
// error, which carries nothing more; err unchanged when it already wraps
// expired (an op that returned its context's cause, perhaps marked
// resilience.Permanent), so the expiry is said once; else expired wrapping
// err.
func expiredWith(expired *expiredError, err error) error {
	if err == context.DeadlineExceeded || err == error(expired) {
		return expired
	}
	if errors.Is(err, expired) {
		return err
	}
	return &expiredError{d: expired.d, err: err}
}
