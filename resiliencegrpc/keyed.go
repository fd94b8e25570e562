package resiliencegrpc

import (
	"context"
	"net"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// WithKeyedLimit rate-limits the server side's calls per key, as
// resiliencehttp.WithKeyedLimit does a Middleware's requests: each call
// takes a token from the bucket of its key, key(ctx), in limits (a
// client's host with [PeerKey], a tenant's metadata with [MetadataKey]),
// before the policy's guards see it; a call whose key's bucket is empty is
// refused with a *resilience.RefusedError matching ratelimit.ErrLimited
// whose RetryAfter is the wait for that bucket's next token, answered with
// ResourceExhausted and a pushback ([RefusalStatus]), and reaches neither
// the policy's guards nor the handler. limits decides the rate, the burst
// and how many keys are tracked (see ratelimit.Keyed).
//
// Every key is a key, an empty one too: all calls whose key is empty (say,
// without the metadata the key function reads) share one bucket, so a call
// cannot escape the limit by having no key. Key on what a client cannot
// vary at will. key is called once per call, from the call's goroutine, so
// it must be safe for simultaneous use.
//
// [InHandle], [UnaryServerInterceptor] and [StreamServerInterceptor] use
// it (in InHandle, gRPC's tap, it refuses a call before its message is
// read); the client interceptors ignore it. The key function and the
// limiter are one option because neither means anything without the
// other. WithKeyedLimit panics if key or limits is nil.
func WithKeyedLimit(key func(ctx context.Context) string, limits *ratelimit.Keyed[string]) Option {
	if key == nil {
		panic("resiliencegrpc: WithKeyedLimit key function must not be nil")
	}
	if limits == nil {
		panic("resiliencegrpc: WithKeyedLimit limits must not be nil")
	}
	layer := ratelimit.KeyedPolicy[struct{}](limits, key)
	return option(func(c *config) { c.keyed = &layer })
}

// guarded returns p behind r's keyed limit, if it has one.
func (r *route) guarded(p resilience.Policy[struct{}]) resilience.Policy[struct{}] {
	if r.keyed == nil {
		return p
	}
	return resilience.Then(*r.keyed, p)
}

// PeerKey returns the host of the call's peer, without its port (a client
// opens connections from many ports), e.g. "10.0.0.7"; the whole address
// when it has no port; "" when ctx has no peer. It is a key function for
// [WithKeyedLimit].
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

// MetadataKey returns a key function for [WithKeyedLimit] that reads the first
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
