package resiliencehttp

import (
	"context"
	"net/http"
	"strings"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// requestKey is the context key of the request a Transport is sending.
type requestKey struct{}

// Request returns the request that a [Transport] is sending under ctx: the
// request given to RoundTrip, as the layers of Transport.Policy see it
// through their context (a key function of a keyed guard reads it, as
// [HostBreaker] does). It returns nil for a context that does not come from
// a Transport's RoundTrip. The request must not be changed.
func Request(ctx context.Context) *http.Request {
	r, _ := ctx.Value(requestKey{}).(*http.Request)
	return r
}

// RequestHost returns the host of the request a [Transport] is sending
// under ctx: its URL's Host (host, or host:port when the URL has a port)
// in lower case, without the scheme's default port (":80" for http,
// ":443" for https), so that "API.example.com", "api.example.com" and
// "https://api.example.com:443" are one host; "" for a context that does
// not come from a Transport's RoundTrip. Names are not resolved:
// "localhost:8080" and "127.0.0.1:8080" are two hosts. It allocates only
// for a host with capital letters.
func RequestHost(ctx context.Context) string {
	if r := Request(ctx); r != nil && r.URL != nil {
		return canonicalHost(r.URL.Scheme, r.URL.Host)
	}
	return ""
}

// canonicalHost returns host, of a URL of scheme, in lower case and
// without the scheme's default port.
func canonicalHost(scheme, host string) string {
	host = strings.ToLower(host)
	switch {
	case strings.EqualFold(scheme, "http"):
		host = strings.TrimSuffix(host, ":80")
	case strings.EqualFold(scheme, "https"):
		host = strings.TrimSuffix(host, ":443")
	}
	return host
}

// HostBreaker returns a layer for [Transport.Policy] that keys breakers by
// the request's host ([RequestHost]: lower case, no default port): each
// host gets its own breaker from
// k, made on first use (see breaker.Keyed for the bound on hosts and what
// is forgotten first), so a host that fails is cut off while the others
// are not. It is breaker.KeyedPolicy(k, RequestHost): requests whose
// context does not come from a Transport share the breaker of host "".
//
// Hosts come from the URLs the client is given: if they come from
// untrusted input, bound their number with Config.MaxKeys (the default is
// 8192) and mind that a flood of hosts can push out the least recently
// used breakers (closed ones first). HostBreaker panics if k is nil.
func HostBreaker(k *breaker.Keyed[string]) resilience.Policy[*http.Response] {
	if k == nil {
		panic("resiliencehttp: HostBreaker Keyed must not be nil")
	}
	return breaker.KeyedPolicy[*http.Response](k, RequestHost)
}
