package resiliencegrpc

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/resiliencegrpc/internal/refusal"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// PushbackKey is the trailer in which a server asks a client to wait
// before it retries (gRFC A6, "server pushback"): a whole number of
// milliseconds, or a negative number for "do not retry".
const PushbackKey = "grpc-retry-pushback-ms"

// StatusError is how a call that ended with a failure status (see
// [IsFailure]) reaches the policies: retry, breaker, a Fallback and the rest
// see it as the attempt's error. Its RetryAfter method carries the server's
// pushback, so a retry waits at least that long, and gives up at once when
// the server said not to retry.
//
// It is also what the caller gets when the policies give up on such a
// failure, directly or wrapped (in a *retry.Error, say). Its GRPCStatus
// method makes status.Code and status.FromError see the call's status
// through it and through any wrapping.
type StatusError struct {
	// Status is the call's status, e.g. Unavailable "connection refused".
	Status *status.Status

	// After is the wait the server's pushback asks for: 0 when there was
	// none, resilience.Never when the server said not to retry (a negative
	// or malformed pushback).
	After time.Duration
}

// Error returns e.g. "resiliencegrpc: Unavailable: overloaded (retry after
// 2s)", or "(retry never)" when the server said not to retry. The wait is
// not repeated when the status message already ends with it, as the
// refusals of this package's server side do ("resiliencegrpc:
// ResourceExhausted: resource exhausted: retry after 198ms").
func (e *StatusError) Error() string {
	msg := "resiliencegrpc: " + e.Status.Code().String()
	m := e.Status.Message()
	if m != "" {
		msg += ": " + m
	}
	var hint string
	switch {
	case e.After == resilience.Never:
		hint = "retry never"
	case e.After > 0:
		hint = "retry after " + e.After.String()
	default:
		return msg
	}
	if strings.HasSuffix(m, hint) {
		return msg
	}
	return msg + " (" + hint + ")"
}

// GRPCStatus returns the call's status, so that status.Code(err) and
// status.FromError(err) report it.
func (e *StatusError) GRPCStatus() *status.Status { return e.Status }

// RetryAfter returns the wait the server's pushback asked for,
// resilience.Never for "do not retry", or -1 (no hint) when After is 0: a
// status without pushback gives no hint, so it never shadows a guard's hint
// beside it in an error tree. Retry and other layers find it with
// resilience.RetryAfter.
func (e *StatusError) RetryAfter() time.Duration {
	if e.After <= 0 {
		return -1
	}
	return e.After
}

// IsFailure is the default classification of a call's status: Unavailable,
// DeadlineExceeded, ResourceExhausted, Internal and Unknown are failures,
// which the policies see as errors (a breaker counts them, a retry retries
// them); every other code is the server's answer (InvalidArgument,
// NotFound, PermissionDenied, FailedPrecondition, Unimplemented, ...),
// which no retry can change and which says the server is up: the policies
// see it as a success, and the caller gets the status as it came.
//
// OK is not a failure. Canceled is not one either: a call cancelled by
// its caller never reaches the classification (the context's error passes
// to the policies, see the package documentation), and a Canceled status
// sent by a server is its answer.
func IsFailure(s *status.Status) bool {
	switch s.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.ResourceExhausted, codes.Internal, codes.Unknown:
		return true
	}
	return false
}

// ParsePushback reads the values of a [PushbackKey] trailer as gRFC A6 says:
// one whole, non-negative number of milliseconds is the wait; a negative
// number, a malformed value or more than one value means "do not retry",
// reported as resilience.Never. ok is false when there is no value. A
// number of milliseconds too large for a time.Duration saturates below
// resilience.Never.
func ParsePushback(values []string) (d time.Duration, ok bool) {
	switch len(values) {
	case 0:
		return 0, false
	case 1:
	default:
		return resilience.Never, true
	}
	v := strings.TrimSpace(values[0])
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		if ne, isNum := err.(*strconv.NumError); isNum && ne.Err == strconv.ErrRange && v != "" && v[0] != '-' {
			return resilience.Never - 1, true
		}
		return resilience.Never, true
	}
	if ms < 0 {
		return resilience.Never, true
	}
	if ms >= int64(resilience.Never/time.Millisecond) {
		return resilience.Never - 1, true
	}
	return time.Duration(ms) * time.Millisecond, true
}

// pushbackOf returns the pushback of a failed call: its [PushbackKey]
// trailer or, when it has none, a google.rpc.RetryInfo detail of its status
// (which a server's tap handle sends, since it cannot set trailers); a
// negative RetryInfo delay means "do not retry". It returns 0 when the call
// has neither.
func pushbackOf(trailer metadata.MD, s *status.Status) time.Duration {
	if d, ok := ParsePushback(trailer.Get(PushbackKey)); ok {
		return d
	}
	if s.Proto().GetDetails() == nil {
		return 0
	}
	for _, d := range s.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			wait := ri.GetRetryDelay().AsDuration()
			if wait < 0 {
				return resilience.Never
			}
			return wait
		}
	}
	return 0
}

// callerError returns err, the error the policies gave up with, as the
// caller of an interceptor gets it: with a gRPC status. An error that has
// one (a *StatusError, wrapped or not) keeps it, unless the caller's own
// context has ended; the others get one of their own (see
// [statusCodeOf]), and match what they matched before through errors.Is and
// errors.As.
func callerError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() == nil {
		var gs interface{ GRPCStatus() *status.Status }
		if errors.As(err, &gs) && gs.GRPCStatus() != nil {
			return err
		}
	}
	return &codedError{err: err, code: statusCodeOf(ctx, err)}
}

// statusCodeOf returns the code of an error that carries no status: the
// caller's context's code when it has ended (Canceled or
// DeadlineExceeded); ResourceExhausted for a rate limiter's refusal;
// Unavailable for any other refusal (an open breaker, a full bulkhead);
// DeadlineExceeded for a timeout; Canceled for a cancellation; Unknown
// otherwise.
func statusCodeOf(ctx context.Context, err error) codes.Code {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return status.FromContextError(ctxErr).Code()
	}
	switch {
	case errors.Is(err, ratelimit.ErrLimited):
		return codes.ResourceExhausted
	case errors.Is(err, resilience.ErrRefused):
		return codes.Unavailable
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	}
	return codes.Unknown
}

// codedError is an error of the policies given a gRPC status code.
type codedError struct {
	err  error
	code codes.Code
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// GRPCStatus returns a status of e's code whose message is e's.
func (e *codedError) GRPCStatus() *status.Status { return status.New(e.code, e.err.Error()) }

// errReturned is the error of an attempt that a policy starts after the
// interceptor returned: the call is not made.
// It matches resilience.ErrRefused, so a breaker does not count it.
var errReturned = refusal.New("resiliencegrpc: attempt started after the call returned", nil)
