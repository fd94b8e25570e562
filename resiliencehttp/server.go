package resiliencehttp

import (
	"context"
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
//	resilience.Then(ratelimit.Policy[struct{}](limiter), bulkhead.Policy[struct{}](bulkhead))
//
// and answers a refusal itself, without calling the handler: 429 Too Many
// Requests for a rate limit (ratelimit.ErrLimited), 503 Service Unavailable
// for any other refusal or error (a full bulkhead, an open breaker). Both
// carry a Retry-After header in whole seconds, rounded up: the refusal's own
// hint (see resilience.RetryAfter) or, when it has none, 1 second. For a
// hint of [resilience.Never] (a rate limiter of rate 0 refuses so) the
// answer has no Retry-After header, which no number of seconds could say,
// and a client falls back on its own backoff.
//
// The handler runs inside p, in the request's goroutine, holding what the
// guards gave it (a bulkhead slot) until it returns. Use guards here: a
// policy that runs its op more than once or in another goroutine (retry,
// hedge, a timeout that abandons its op) cannot run an http.Handler.
// A handler's panic goes through p, which releases what it holds, and on to
// net/http.
func Middleware(p resilience.Policy[struct{}]) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			served := false
			_, err := p.Do(r.Context(), func(ctx context.Context) (struct{}, error) {
				served = true
				if ctx != r.Context() {
					r = r.WithContext(ctx)
				}
				h.ServeHTTP(w, r)
				return struct{}{}, nil
			})
			if err != nil && !served {
				refuse(w, err)
			}
		})
	}
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
