package resiliencegrpc

import (
	"context"
	"net"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// KeyedLimit returns a guard layer that rate-limits each call by its key:
// key(ctx) names the call's bucket in k (a client's address with
// [PeerKey], a tenant's header with [MetadataKey]), and the call takes one
// token from it as ratelimit.Policy does, or is refused with a
// *resilience.RefusedError matching ratelimit.ErrLimited whose RetryAfter
// is the wait for that bucket's next token. Use it in [InHandle] or in the
// server interceptors. Each call allocates a little (the bucket's layer).
// The layer describes itself as a rate limiter that does not wait, for
// resilience's Policy.Check and Policy.Bounds.
// KeyedLimit panics if k or key is nil.
func KeyedLimit[T any](k *ratelimit.Keyed[string], key func(ctx context.Context) string) resilience.Policy[T] {
	if k == nil || key == nil {
		panic("resiliencegrpc: KeyedLimit needs a Keyed limiter and a key function")
	}
	return resilience.New("ratelimit(keyed)", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		return ratelimit.Policy[T](k.Limiter(key(ctx))).Do(ctx, next.Call)
	}).Describe(resilience.Layer{Kind: resilience.KindRateLimit})
}

// PeerKey returns the host of the call's peer, without its port (a client
// opens connections from many ports), e.g. "10.0.0.7"; the whole address
// when it has no port; "" when ctx has no peer. It is a key function for
// [KeyedLimit].
func PeerKey(ctx context.Context) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return ""
	}
	addr := p.Addr.String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// MetadataKey returns a key function for [KeyedLimit] that reads the first
// value of the call's incoming metadata under name (case-insensitive, as
// gRPC metadata keys are), "" when it has none: all calls without it share
// one bucket. Key on what a client cannot vary at will (see
// ratelimit.Keyed): an authenticated identity set by an earlier
// interceptor, rather than a header any client sets.
func MetadataKey(name string) func(ctx context.Context) string {
	return func(ctx context.Context) string {
		if v := metadata.ValueFromIncomingContext(ctx, name); len(v) > 0 {
			return v[0]
		}
		return ""
	}
}
