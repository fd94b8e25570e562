package adaptive

import "github.com/f0b5b96b/resilience/internal/refusal"

// A limiter's refusals are *resilience.RefusedError values with the
// limiter's name and no Retry-After hint (a limiter cannot know when a
// call in flight ends). Their Reason is one of these sentinels; errors.Is
// matches it, and resilience.ErrRefused, through the refusal.
var (
	// ErrFull is matched by every refusal of a [Limiter]: as many calls in
	// flight as the current limit allows the call's priority, and no room
	// in the queue; a place in the queue taken by a call of higher
	// priority; or [Config.MaxWait] spent in the queue.
	ErrFull error = refusal.New("adaptive: full", nil)
	// ErrQueueTimeout is matched by the refusal of a caller that waited
	// [Config.MaxWait] in the queue without being admitted. It also
	// matches [ErrFull].
	ErrQueueTimeout error = refusal.New("adaptive: full, MaxWait spent in the queue", ErrFull)
)
