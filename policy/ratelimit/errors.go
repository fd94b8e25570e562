package ratelimit

import (
	"errors"

	"github.com/f0b5b96b/resilience/internal/refusal"
)

// ErrLimited is matched, through errors.Is, by every refusal of a rate
// limiter: no token now (through [Policy]), or a wait for one that would be
// too long ([Limiter.Wait], [WaitPolicy]). It also matches
// resilience.ErrRefused. Refusals are *resilience.RefusedError values
// with the limiter's name and, as RetryAfter, how long from the refusal
// until the tokens asked for would be there if nobody else took them: the
// shortest wait after which the same call would pass (resilience.Never
// with no refill: Rate Off).
var ErrLimited error = refusal.New("ratelimit: limited", nil)

// ErrExceedsBurst is matched, through errors.Is, by the error of
// [Limiter.WaitN] asked for more events than the burst: the bucket can
// never hold that many tokens, so no wait would help. It is a mistake of
// the caller rather than a refusal under load: it matches neither
// [ErrLimited] nor resilience.ErrRefused, and carries no RetryAfter. (A
// [Policy] or [WaitPolicy] takes one token per call and never returns it.)
var ErrExceedsBurst = errors.New("ratelimit: events exceed the burst")
