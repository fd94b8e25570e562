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
	"github.com/f0b5b96b/resilience/internal/refusal"
	"github.com/f0b5b96b/resilience/internal/serve"
	"github.com/f0b5b96b/resilience/policy/ratelimit"
	"github.com/f0b5b96b/resilience/telemetry"
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
// the refusal's own hint (see resilience.RetryAfter) or, when it has none
// or a hint of 0, 1 second. For a hint of [resilience.Never] (a rate limiter of rate 0
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
// # Guards only
//
// p is for guards: policies that decide whether the handler runs and learn
// how it went, calling their op at most once, in the request's goroutine:
// breaker, bulkhead, rate limiter, an adaptive concurrency limiter, and a
// timeout that waits for its op (the default: the handler sees the
// deadline on r.Context()). A handler answers once, on one ResponseWriter,
// so a policy that calls its op again, calls it in another goroutine and
// returns without it, or answers for it cannot work here; Middleware keeps
// it from doing harm:
//
//   - retry, hedge: the handler runs at most once per request. A second call
//     of the op, or one made while the handler runs, returns at once,
//     without running the handler, an error matching
//     resilience.ErrRefused (a breaker does not count it) and marked
//     [resilience.Permanent] (a retry stops); the client gets the first
//     call's answer.
//   - a timeout WithAbandon: ServeHTTP never returns while the handler
//     runs. When p returns first, ServeHTTP waits for the handler, whose
//     answer the client gets: a handler cannot be abandoned. An op that p
//     starts after ServeHTTP stopped waiting for p is refused as above.
//   - fallback: when p returns a nil error without having called the
//     handler (a fallback turned a guard's refusal into a success), the
//     client gets 500 Internal Server Error, with a body naming the
//     problem, rather than an empty 200. A fallback that returns an error
//     gets the answer to a refusal.
//
// Retry, hedge and fallback belong on the client side ([Transport]), where
// a request can be sent again.
//
// # Stacking
//
// Middlewares stack (a keyed limit per client around one per tenant, a
// breaker around a bulkhead): a refusal answered by an inner Middleware
// reaches the guards of the Middlewares around it as that refusal, an
// error matching resilience.ErrRefused and the guard's sentinel, not as
// the handler's 429 or 503, so an outer breaker does not count it. The
// inner Middleware finds the outer ones through its ResponseWriter, also
// through other middleware's ResponseWriters in between that have an
// Unwrap method (as http.ResponseController expects).
//
// The handler gets a ResponseWriter that records the status: it passes on
// Flush, Hijack (when the server's ResponseWriter has it), ReadFrom and,
// for http.ResponseController, Unwrap.
//
// # Events
//
// With [WithObserver], Middleware reports its decision on each request as
// one event: [EventAnswered] (the handler answered, and not with a
// failure), [EventFailure] (the handler answered with a failure, Err its
// [*StatusError]; or p let the request through without calling the
// handler, Err [ErrNotServed]) or [EventRefused] (p's guards, or an inner
// Middleware, refused it; Err the refusal). The events' Name is p's
// description, p.String() (for example "ratelimit(api) > breaker(db)"),
// and their Key the request's key under [WithKeyedLimit] ("" without it).
// A handler that panics reports nothing: the panic goes on to net/http.
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
	name := p.String()
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s := &serving{p: p, h: h, r: r, rec: recorder{ResponseWriter: w}}
			// However p returns, a panic included, ServeHTTP does not
			// return while the handler runs.
			var ran bool
			var err error
			var key string
			if m.key == nil {
				ran, err = s.Do(r.Context(), p, s.serve)
			} else {
				key = trackedKey(m.key(r))
				lim := m.limits.Limiter(key)
				ran, err = s.Do(r.Context(), ratelimit.Policy[struct{}](lim), s.guard)
			}
			switch {
			case ran:
				// The handler answered.
				if m.observer != nil {
					m.observer.Observe(s.outcome(name, key))
				}
			case err != nil:
				refuse(w, err)
				if errors.Is(err, resilience.ErrRefused) {
					markRefused(w, err)
				}
				if m.observer != nil {
					m.observer.Observe(telemetry.Event{Type: EventRefused, Name: name, Key: key, Err: err})
				}
			default:
				http.Error(w, msgNotServed, http.StatusInternalServerError)
				if m.observer != nil {
					m.observer.Observe(telemetry.Event{Type: EventFailure, Name: name, Key: key, Err: ErrNotServed})
				}
			}
		})
	}
}

// Kind is the kind of [Middleware]'s events.
const Kind telemetry.Kind = "http_server"

// The events of [Middleware], which this package owns (as each policy owns
// its events: breaker.EventOpened, ...), one per request, to the observer
// given with [WithObserver]. See "Events" at Middleware for their fields.
const (
	// EventAnswered: the handler answered the request, with a status
	// that is not a failure (2xx, 3xx, 4xx, 501), or hijacked it.
	EventAnswered telemetry.Type = "http_server.answered"
	// EventFailure: the handler answered with a failure (a 5xx other than
	// 501; Err its *StatusError), or p returned without calling it (Err
	// ErrNotServed; the client got 500).
	EventFailure telemetry.Type = "http_server.failure"
	// EventRefused: the request was refused before the handler ran (Err
	// the refusal, which the client got as 429 or 503), by p's guards,
	// the WithKeyedLimit limit, or a Middleware inside this one. A
	// telemetry.Slog writes it at Debug, as every "*.refused" event.
	EventRefused telemetry.Type = "http_server.refused"
)

// ErrNotServed is the Err of an [EventFailure] reporting a request that
// the Middleware's policy let through without calling the handler (a
// fallback turned a refusal into a success): the client got 500.
var ErrNotServed = errors.New(msgNotServed)

// outcome returns the event of a request whose handler ran.
func (s *serving) outcome(name, key string) telemetry.Event {
	switch {
	case s.rec.refused != nil:
		return telemetry.Event{Type: EventRefused, Name: name, Key: key, Err: s.rec.refused}
	case failed(s.rec.status):
		return telemetry.Event{Type: EventFailure, Name: name, Key: key, Err: &StatusError{StatusCode: s.rec.status}}
	}
	return telemetry.Event{Type: EventAnswered, Name: name, Key: key}
}

// msgNotServed is the answer to a request that p let through without
// calling the handler: a fallback in p turned a refusal into a success.
const msgNotServed = "resiliencehttp: the Middleware's policy returned without calling the handler (a fallback cannot answer an HTTP request)"

// errServedAlready is what p's op returns when p calls it again (a retry,
// a hedge), or after ServeHTTP gave up on p (a timeout that abandoned the
// op before it started): a refusal, so a breaker does not count it, and
// permanent, so a retry stops at once.
var errServedAlready = resilience.Permanent(refusal.New("resiliencehttp: the handler runs once per request: the Middleware's policy called its op again", nil))

// serving is one request going through Middleware.
type serving struct {
	p   resilience.Policy[struct{}]
	h   http.Handler
	r   *http.Request
	rec recorder

	serve.Once // the handler runs once; ServeHTTP waits for it
}

// guard runs the request through p.
func (s *serving) guard(ctx context.Context) (struct{}, error) {
	return s.p.Do(ctx, s.serve)
}

// serve is p's op: it runs the handler, the first time it is called, and
// tells p's guards whether it failed. A later or simultaneous call returns
// errServedAlready without running it.
func (s *serving) serve(ctx context.Context) (struct{}, error) {
	if !s.Enter() {
		return struct{}{}, errServedAlready
	}
	defer s.Exit()
	r := s.r
	if ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	s.h.ServeHTTP(s.rec.writer(), r)
	if err := s.rec.refused; err != nil {
		// A Middleware inside refused the request: so do p's guards.
		return struct{}{}, err
	}
	if code := s.rec.status; failed(code) {
		return struct{}{}, &StatusError{StatusCode: code}
	}
	return struct{}{}, nil
}

// markRefused tells the Middlewares around this one that their handler's
// answer is err, a refusal: it marks each recorder that w wraps, found
// through the Unwrap methods of the ResponseWriters in between (other
// middleware's, as http.ResponseController finds what they wrap).
func markRefused(w http.ResponseWriter, err error) {
	for {
		switch rec := w.(type) {
		case *recorder:
			rec.refused = err
		case hijackRecorder:
			rec.refused = err
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
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
	key      func(*http.Request) string
	limits   *ratelimit.Keyed[string]
	observer telemetry.Observer
}

// WithObserver makes [Middleware] report its decision on each request to
// o: [EventAnswered], [EventFailure] or [EventRefused] (see "Events" at
// Middleware). o is called on the request's goroutine, from many at once,
// so it must be safe for that. nil, the default, reports nothing.
func WithObserver(o telemetry.Observer) MiddlewareOption {
	return middlewareOption(func(m *middleware) { m.observer = o })
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
// Middlewares: an inner one's 429 is a refusal to the outer one's guards
// (see "Stacking" at [Middleware]). WithKeyedLimit panics if key or limits is nil.
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
