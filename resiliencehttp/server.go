package resiliencehttp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
)

// Middleware returns server middleware that admits each request through p,
// a policy of guards such as
//
//	resilience.Then(breaker.Policy[struct{}](brk), bulkhead.Policy[struct{}](slots))
//
// configured by opts (a rate limit per client, [WithKeyedLimit]). The zero
// Policy admits every request.
//
// Middleware answers a refusal itself, without calling the handler: 429
// Too Many Requests for a rate limit (ratelimit.ErrLimited), 503 Service
// Unavailable for any other refusal or error (a full bulkhead, an open
// breaker). Both carry a Retry-After header in whole seconds, rounded up:
// the refusal's own hint (see resilience.RetryAfter) or, when it has none,
// 1 second. For a hint of [resilience.Never] (a rate limiter of rate 0
// refuses so) the answer has no Retry-After header, which no number of
// seconds could say, and a client falls back on its own backoff.
//
// The handler runs inside p, in the request's goroutine, holding what the
// guards gave it (a bulkhead slot) until it returns, and p's guards learn
// what it did: a handler that answers with a 5xx status other than 501 Not
// Implemented (which no retry can fix), or that panics, has failed, so a
// breaker in p counts it and opens when the handler keeps failing; any
// other answer (2xx, 3xx, 4xx, 429 included: that is the handler shedding
// load, not failing) is a success, and so is a handler that hijacks the
// connection. To a guard, the failure is a [*StatusError] carrying the
// status. A handler's panic goes through p, whose guards release what they
// hold (a breaker counts it as a failure), and on to net/http unchanged.
// A breaker ignores a failure of a request whose client went away
// (r.Context() canceled), as it ignores any call its caller cancelled.
//
// Use guards in p: a policy that runs its op more than once or in another
// goroutine (retry, hedge, a timeout that abandons its op) cannot run an
// http.Handler.
//
// The handler gets a ResponseWriter that records the status: it passes on
// Flush, Hijack (when the server's ResponseWriter has it), ReadFrom and,
// for http.ResponseController, Unwrap.
//
// Middleware panics if an option is nil or invalid, with a message naming
// it.
func Middleware(p resilience.Policy[struct{}], opts ...MiddlewareOption) func(http.Handler) http.Handler {
	var m middleware
	for _, o := range opts {
		if o == nil {
			panic("resiliencehttp: Middleware option must not be nil")
		}
		o.applyMiddleware(&m)
	}
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s := &serving{p: p, h: h, r: r, rec: recorder{ResponseWriter: w}}
			var err error
			if m.key == nil {
				_, err = p.Do(r.Context(), s.serve)
			} else {
				lim := m.limits.Limiter(trackedKey(m.key(r)))
				_, err = ratelimit.Policy[struct{}](lim).Do(r.Context(), s.guard)
			}
			if err != nil && !s.served {
				refuse(w, err)
			}
		})
	}
}

// serving is one request going through Middleware.
type serving struct {
	p      resilience.Policy[struct{}]
	h      http.Handler
	r      *http.Request
	rec    recorder
	served bool // the handler was called
}

// guard runs the request through p.
func (s *serving) guard(ctx context.Context) (struct{}, error) {
	return s.p.Do(ctx, s.serve)
}

// serve is p's op: it runs the handler, and tells p's guards whether it
// failed.
func (s *serving) serve(ctx context.Context) (struct{}, error) {
	s.served = true
	r := s.r
	if ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	s.h.ServeHTTP(s.rec.writer(), r)
	if code := s.rec.status; failed(code) {
		return struct{}{}, &StatusError{StatusCode: code}
	}
	return struct{}{}, nil
}

// MiddlewareOption configures [Middleware]. Options are applied in order;
// a later option of the same kind replaces an earlier one.
type MiddlewareOption interface {
	applyMiddleware(*middleware)
}

type middlewareOption func(*middleware)

func (o middlewareOption) applyMiddleware(m *middleware) { o(m) }

// middleware is Middleware's configuration.
type middleware struct {
	key    func(*http.Request) string
	limits *ratelimit.Keyed[string]
}

// WithKeyedLimit rate-limits requests per key: each request takes a token
// from the bucket of its key, key(r), in limits (a client's address, an API
// key, a tenant), before p sees it; a request whose key's bucket is empty
// is answered 429 Too Many Requests with that bucket's own Retry-After,
// and reaches neither p's guards nor the handler. limits decides the rate,
// the burst and how many keys are tracked (MaxKeys, 8192 by default: the
// least recently used key is forgotten, and comes back with a full
// bucket; see ratelimit.Keyed for what a client that makes many keys can
// do).
//
// Every key is a key: an empty one too. All requests whose key is empty
// (say, those without the API key header the key function reads) share
// one bucket, so a request cannot escape the limit by having no key; to
// refuse such requests instead, do it in a handler in front of the
// Middleware. A key longer than 64 bytes is tracked by its SHA-256 digest
// (71 bytes), so a client that sends huge keys cannot make the tracked
// keys hold more than about MaxKeys × 100 bytes; distinct keys stay
// distinct.
//
// Key on what a client cannot vary at will: an authenticated identity, or
// the client's host (the host of r.RemoteAddr, without its port, which
// changes with every connection; behind a proxy, the address the proxy
// vouches for). key is called once per request, from the request's
// goroutine, so it must be safe for simultaneous use.
//
// For several keyed limits (per client and per tenant), stack several
// Middlewares. WithKeyedLimit panics if key or limits is nil.
func WithKeyedLimit(key func(*http.Request) string, limits *ratelimit.Keyed[string]) MiddlewareOption {
	if key == nil {
		panic("resiliencehttp: WithKeyedLimit key function must not be nil")
	}
	if limits == nil {
		panic("resiliencehttp: WithKeyedLimit limits must not be nil")
	}
	return middlewareOption(func(m *middleware) { m.key, m.limits = key, limits })
}

// maxKeyLen is the longest key tracked as it is; a longer one is tracked by
// its digest, which is longer than maxKeyLen, so that it never equals a
// key tracked as it is.
const maxKeyLen = 64

// trackedKey returns the key under which key's bucket is tracked.
func trackedKey(key string) string {
	if len(key) <= maxKeyLen {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// failed reports whether a handler's status is a failure for the guards:
// 5xx except 501 Not Implemented.
func failed(code int) bool {
	return code >= 500 && code <= 599 && code != http.StatusNotImplemented
}

// refuse answers a request the guards turned away.
func refuse(w http.ResponseWriter, err error) {
	code := http.StatusServiceUnavailable
	if errors.Is(err, ratelimit.ErrLimited) {
		code = http.StatusTooManyRequests
	}
	after, ok := resilience.RetryAfter(err)
	if !ok || after <= 0 {
		after = time.Second
	}
	if after != resilience.Never {
		secs := int64(after / time.Second)
		if after%time.Second != 0 {
			secs++
		}
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	}
	http.Error(w, http.StatusText(code), code)
}
