package adaptive

import (
	"context"
	"strconv"
)

// Priority is how important a call is to a [Limiter] when it sheds load:
// with a reserve ([Config.Reserve]), calls of lower priority are refused
// while part of the limit is still free, so critical calls are shed last;
// in the queue, calls of higher priority are admitted first, and one may
// take the place of a queued call of lower priority. The zero Priority is
// [Normal].
type Priority int8

const (
	// Low is for calls that may be shed first: prefetches, batch work.
	Low Priority = -1
	// Normal is the priority of a call whose context carries none.
	Normal Priority = 0
	// Critical is for calls that must be shed last: a checkout, a health
	// check of the load balancer.
	Critical Priority = 1
)

// String returns "low", "normal" or "critical", or "Priority(n)".
func (p Priority) String() string {
	switch p {
	case Low:
		return "low"
	case Normal:
		return "normal"
	case Critical:
		return "critical"
	}
	return "Priority(" + strconv.Itoa(int(p)) + ")"
}

type priorityKey struct{}

// ContextWithPriority returns a copy of ctx that carries p: a [Limiter]
// admits a call made under it as a call of priority p. Set it where the
// call's importance is known (a middleware in front of the limiter's, from
// a header or the route; a gRPC interceptor, from the method), and it goes
// through every layer of a policy to the limiter. It panics if p is not
// [Low], [Normal] or [Critical].
func ContextWithPriority(ctx context.Context, p Priority) context.Context {
	if p < Low || p > Critical {
		panic("adaptive: ContextWithPriority priority must be Low, Normal or Critical, got " + p.String())
	}
	return context.WithValue(ctx, priorityKey{}, p)
}

// priorityOf returns the priority ctx carries, or Normal.
func priorityOf(ctx context.Context) Priority {
	if p, ok := ctx.Value(priorityKey{}).(Priority); ok {
		return p
	}
	return Normal
}

// rank is p's index in the limiter's queues: 0 for Critical, 2 for Low.
func (p Priority) rank() int { return int(Critical - p) }
