package bulkhead

import "github.com/f0b5b96b/resilience/internal/refusal"

// A bulkhead's refusals are *resilience.RefusedError values with the
// bulkhead's name and no Retry-After hint (a bulkhead cannot know when a
// slot frees). Their Reason is one of these sentinels; errors.Is matches
// it, and resilience.ErrRefused, through the refusal.
var (
	// ErrFull is matched by every refusal of a [Bulkhead]: every slot taken
	// and no room in the queue, or [Config.MaxWait] spent in the queue.
	ErrFull error = refusal.New("bulkhead: full", nil)
	// ErrQueueTimeout is matched by the refusal of a caller that waited
	// [Config.MaxWait] in the queue without getting a slot. It also
	// matches [ErrFull].
	ErrQueueTimeout error = refusal.New("bulkhead: full, MaxWait spent in the queue", ErrFull)
)
