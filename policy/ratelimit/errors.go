package ratelimit

import (
	"errors"
	"time"

	"github.com/f0b5b96b/resilience/internal/refusal"
)

// ErrLimited is matched, through errors.Is, by every refusal of a rate
// limiter: no token now (through [Policy]), or a wait for one that would be
// too long ([Limiter.Wait], [WaitPolicy]). It also matches
// resilience.ErrRefused. Refusals are returned as a *[LimitedError], which
// carries the limiter's name and when to come back.
var ErrLimited error = refusal.Sentinel("ratelimit: limited")

// ErrExceedsBurst is matched, through errors.Is, by the error of
// [Limiter.WaitN] asked for more events than the burst: the bucket can
// never hold that many tokens, so no wait would help. It is a mistake of
// the caller rather than a refusal under load: it matches neither
// [ErrLimited] nor resilience.ErrRefused, and carries no RetryAfter. (A
// [Policy] or [WaitPolicy] takes one token per call and never returns it.)
var ErrExceedsBurst = errors.New("ratelimit: events exceed the burst")

// LimitedError is the error of a refused call. It matches [ErrLimited] and
// resilience.ErrRefused through errors.Is, and resilience.RetryAfter reads
// its wait.
type LimitedError struct {
	// Name is the limiter's [Config.Name], possibly empty.
	Name string

	// Wait is how long from the refusal until the tokens asked for would
	// be there, if nobody else took them: the shortest wait after which
	// the same call would pass. With Rate 0 it is math.MaxInt64 (never).
	Wait time.Duration
}

// Error reads "ratelimit: limited (api), retry after 250ms"; the
// parenthesis is left out when Name is empty, and the retry is "never" when
// Wait is math.MaxInt64.
func (e *LimitedError) Error() string {
	msg := string(ErrLimited.(refusal.Sentinel))
	if e.Name != "" {
		msg += " (" + e.Name + ")"
	}
	if e.Wait == never {
		return msg + ", retry never"
	}
	return msg + ", retry after " + e.Wait.String()
}

// RetryAfter returns Wait: when to come back.
func (e *LimitedError) RetryAfter() time.Duration { return e.Wait }

// Unwrap returns [ErrLimited].
func (e *LimitedError) Unwrap() error { return ErrLimited }
