package throttle

import "github.com/f0b5b96b/resilience/internal/refusal"

// ErrThrottled is the Reason of a [Throttler]'s refusals: the call was
// dropped on the client, without calling the dependency, because the
// dependency has been refusing or failing calls. A refusal is a
// *resilience.RefusedError with the throttler's name and no Retry-After
// hint; errors.Is matches it against ErrThrottled and resilience.ErrRefused.
var ErrThrottled error = refusal.New("throttle: throttled", nil)
