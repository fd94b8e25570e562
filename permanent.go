package resilience

import "errors"

// Permanent returns err marked as not worth retrying: a retry policy returns
// it at once, as it is, without another attempt, and integrations
// (resiliencehttp, gRPC) mark errors that no retry can mend with it (a
// request body that cannot be replayed, a 4xx answer). The mark is
// transparent: the result's message is err's, errors.Is and errors.As reach
// err through it, and its Timeout method reports err's. The mark survives
// wrapping with %w, so a Permanent error returned by an inner retry also
// stops the outer ones. Permanent(nil) returns nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err's tree holds an error marked by
// [Permanent]. It does not allocate.
func IsPermanent(err error) bool { return errors.Is(err, errPermanent) }

type permanentError struct{ err error }

func (e *permanentError) Error() string        { return e.err.Error() }
func (e *permanentError) Unwrap() error        { return e.err }
func (e *permanentError) Is(target error) bool { return target == errPermanent }

// Timeout reports what err's own Timeout method does, so the mark stays
// transparent to code that asks an error directly, as url.Error.Timeout
// and net.Error users do.
func (e *permanentError) Timeout() bool {
	t, ok := e.err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}

// errPermanent is matched by every error marked by Permanent; errors.Is
// finds it without allocating, where errors.As would.
var errPermanent = errors.New("resilience: permanent")
