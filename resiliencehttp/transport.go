package resiliencehttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/internal/refusal"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
)

// ErrBodyNotReplayable is the error of an attempt after the first for a
// request whose body cannot be sent again: it has a body but no GetBody
// (http.NewRequest sets GetBody for bytes.Buffer, bytes.Reader and
// strings.Reader bodies). The first attempt's failure is marked
// [resilience.Permanent] so that a retry policy stops at once; a hedge's
// extra attempt gets this error. It is a sentinel matching
// resilience.ErrRefused (compare it with errors.Is): the request was not
// sent, so a breaker does not count it.
//
// When the first attempt is cut short by its own context (a timeout), its
// error is that context's cause, marked permanent; the caller's error says
// the cause once, e.g. `Post "…": timeout: call exceeded 100ms`, and
// matches it (timeout.ErrTimeout, context.DeadlineExceeded), not this
// error: the request was sent.
var ErrBodyNotReplayable error = refusal.New("resiliencehttp: request body cannot be replayed (no GetBody)", nil)

// errReturned is the error of an attempt that a policy starts after
// RoundTrip returned: the request is not sent, since the caller may be
// reusing it.
var errReturned = refusal.New("resiliencehttp: attempt started after RoundTrip returned", nil)

// Transport is an [http.RoundTripper] that sends each request through a
// resilience.Policy[*http.Response]: retries, breaker, timeout and the rest
// see each attempt, and responses that [IsFailure] (or Classify) calls
// failures reach them as a [*StatusError] carrying the Retry-After header.
//
// The caller gets what a RoundTripper returns: the winning response with
// its body intact (a Body that is http.NoBody stays http.NoBody); or, when the policies give up, the last failure response
// whose body could be read (e.g. the final 503), with its body intact; or,
// when there is none (or the request's own context ended), the error.
// Every other response, discarded by a retry or a hedge, is closed, so no
// connection leaks, and never makes the caller wait: a failure's body is
// read (up to 64 KiB) within its attempt, as below; a success's body (a
// hedge's loser) is drained in the background, up to 64 KiB and for at
// most 250 ms, so that its connection can be reused, and then closed. A
// longer body, or one that stalls, is closed unread, which costs its
// connection.
//
// Each attempt runs under the context the policies give it until its
// response headers arrive and, for a failure, until its body has been read,
// up to 64 KiB: a timeout, a hedge or a retry bounds both. If that read
// fails, because the attempt's context ended or the connection broke, the
// attempt fails with the context's cause (a timeout's error, say) or with
// the read error wrapped in the response's [*StatusError], e.g.
// "resiliencehttp: 503 Service Unavailable: reading its body: unexpected
// EOF", and the response is closed: the caller never gets a response
// whose body is known to be broken. Beyond the headers of a
// success, and beyond the first 64 KiB of a failure's body, the body lives
// as long as the request's own context, not the attempt's:
// http.Client.Timeout or the request's context bounds it.
//
// A layer may return before the attempts it started are done (a timeout
// WithAbandon does). A response that arrives after RoundTrip returned is
// discarded at once, as above (the layers still see it, with its body
// closed or being drained); an
// attempt that starts after RoundTrip returned does not send the request,
// and fails with an error matching resilience.ErrRefused.
//
// Retries send the body again through Request.GetBody; a request whose body
// cannot be replayed is sent once (see [ErrBodyNotReplayable]).
//
// The zero Transport sends each request once through
// http.DefaultTransport. A Transport is safe for simultaneous use; its
// fields must not change once it is in use.
//
// # Guards and response bodies
//
// Each layer of Policy sees an attempt as one call of its op, which returns
// when the response headers arrive (for a failure, once its body is read,
// up to 64 KiB): the caller can read the body only after every layer has
// returned the response. So a guard in Policy covers the attempt up to
// that point, not the body the caller reads later: a bulkhead.Policy
// gives its slot back, and a breaker's SlowCall stops its clock, when the
// headers arrive. That is by design: were the op to last until the caller
// finished the body, every layer would judge the attempt by the caller's
// reading pace, and a timeout or a hedge would give up on an attempt (and
// start another) while the caller still reads it. A breaker's SlowCall
// thus measures the time to the headers, which is the dependency's
// latency; a body's time depends on its size and on the reader.
//
// To bound whole exchanges, bodies included, set [Transport.Bulkhead]: the
// Transport itself holds its slot until each body is read to its end or
// closed.
type Transport struct {
	// Base sends each attempt; nil means http.DefaultTransport.
	Base http.RoundTripper

	// Policy guards each request; the zero Policy sends it once.
	Policy resilience.Policy[*http.Response]

	// Bulkhead, if not nil, bounds the exchanges in flight to Base, bodies
	// included: each attempt takes a slot (with Acquire, under the
	// attempt's context, so it may wait in the bulkhead's queue as long as
	// Policy lets the attempt run) before it sends the request, and gives
	// it back when its exchange is over: when a read of the response's
	// body returns an error (io.EOF at its end), when the body is closed,
	// or when the Transport discards the response or the attempt fails
	// without one. A failure's body read whole (up to 64 KiB) gives it
	// back at once, and so does a response that has no body: one whose
	// Body is http.NoBody (as net/http gives it), or the answer to a HEAD,
	// a 204, a 304 or one of Content-Length 0 from a Base of one's own. Retries and hedges take a slot per attempt, so the
	// server never sees more than MaxConcurrent requests at once from
	// this Transport. A refused attempt is not sent; its error is the
	// bulkhead's refusal (matching bulkhead.ErrFull and
	// resilience.ErrRefused), which a breaker in Policy does not count and
	// a retry may retry. A caller that neither reads a body to its end
	// nor closes it keeps its slot, as it keeps its connection.
	//
	// A failure response whose body is longer than 64 KiB, kept in case
	// it is the last one, holds its slot too; an attempt of the same
	// request that finds no free slot closes that response first rather
	// than wait for a slot its own request holds (the caller may then get
	// the later attempt's error instead of that response).
	//
	// nil means no such bound. A bulkhead.Policy inside Policy bounds
	// attempts only up to their response headers (see the Transport doc);
	// use this field to bound whole exchanges.
	Bulkhead *bulkhead.Bulkhead

	// Classify reports whether a response is a failure for the policies;
	// nil means IsFailure. It is called once per attempt, from the
	// attempt's goroutine: concurrently for concurrent requests and for a
	// hedge's attempts, so it must be safe for simultaneous use.
	Classify func(*http.Response) bool
}

// RoundTrip sends req through t.Policy, under req's context with req in it
// (see [Request]). It follows the RoundTripper contract: it does not
// change req, and it closes req.Body, also on error.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ex := &exchange{t: t, req: req}
	resp, err := t.Policy.Do(context.WithValue(req.Context(), requestKey{}, req), ex.attempt)
	return ex.finish(resp, err)
}

// CloseIdleConnections closes the idle connections of t.Base (of
// http.DefaultTransport when Base is nil), if it has such a method, so that
// http.Client.CloseIdleConnections reaches through the Transport.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base().(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// base returns the transport that sends each attempt.
func (t *Transport) base() http.RoundTripper {
	if t.Base != nil {
		return t.Base
	}
	return http.DefaultTransport
}

// exchange is the state of one RoundTrip: what each attempt needs and the
// responses that attempts received.
type exchange struct {
	t   *Transport
	req *http.Request

	mu        sync.Mutex
	finished  bool // RoundTrip has returned (a layer may abandon attempts)
	attempts  int
	bodyUsed  bool             // req.Body was handed to the base transport
	responses []*http.Response // received, not yet closed; oldest first
	lastFail  *http.Response   // the newest response classified as a failure
}

func (ex *exchange) isFailure(resp *http.Response) bool {
	if ex.t.Classify != nil {
		return ex.t.Classify(resp)
	}
	return IsFailure(resp)
}

// bodyless reports whether the request has no body to send.
func (ex *exchange) bodyless() bool {
	return ex.req.Body == nil || ex.req.Body == http.NoBody
}

// replayable reports whether the request can be sent more than once.
func (ex *exchange) replayable() bool { return ex.bodyless() || ex.req.GetBody != nil }

// attempt is the Op the policies run: one send of the request.
func (ex *exchange) attempt(ctx context.Context) (*http.Response, error) {
	r := ex.req.Clone(ctx)
	ex.mu.Lock()
	finished := ex.finished
	ex.mu.Unlock()
	if finished {
		return nil, errReturned
	}
	// A slot of t.Bulkhead is held until the exchange is over: by the
	// response's body when one is handed on (or discarded), else until the
	// attempt returns.
	var s *slot
	if b := ex.t.Bulkhead; b != nil {
		if !b.TryAcquire() {
			// Never wait for a slot while this exchange idles on one: the
			// last failure's body, too long to read whole, holds it.
			ex.dropLastFail()
			if err := b.Acquire(ctx); err != nil {
				return nil, err
			}
		}
		s = &slot{b: b}
	}
	handedOn := false
	defer func() {
		if !handedOn {
			s.release()
		}
	}()
	ex.mu.Lock()
	if ex.finished {
		ex.mu.Unlock()
		return nil, errReturned
	}
	ex.attempts++
	fresh := ex.attempts == 1 || ex.bodyless()
	if fresh {
		ex.bodyUsed = true
	}
	ex.mu.Unlock()
	switch {
	case fresh:
		r.Body = ex.req.Body
	case ex.req.GetBody == nil:
		return nil, ErrBodyNotReplayable
	default:
		body, err := ex.req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("resiliencehttp: GetBody: %w", err)
		}
		r.Body = body
	}

	// The attempt's context governs the exchange until the headers arrive
	// and, for a failure, until its body is read (bounded), so that a
	// timeout, a hedge or a retry bounds both. After that the body belongs
	// to the request's own context, so that a policy that cancels the
	// attempt's context when the attempt returns (a timeout does) does not
	// cut the body off under the caller.
	reqCtx, cancel := context.WithCancel(ex.req.Context())
	stop := context.AfterFunc(ctx, cancel)
	resp, err := ex.t.base().RoundTrip(r.WithContext(reqCtx))
	failed := false
	var readErr error
	if err == nil {
		failed = ex.isFailure(resp)
		if failed {
			// A failure's body is usually short: read it now and close it,
			// so its connection is free for the next attempt while the
			// response stays whole in case it is the last one.
			readErr = buffer(resp, cancel, s)
		}
	}
	if !stop() {
		// The attempt's context ended before the attempt was done.
		cancel()
		if err == nil {
			discard(resp)
		}
		cause := context.Cause(ctx)
		if ex.replayable() {
			return nil, cause
		}
		return nil, resilience.Permanent(cause)
	}
	var status *StatusError
	if failed {
		status = &StatusError{
			StatusCode: resp.StatusCode,
			Status:     resp.Status,
			After:      retryAfterOf(resp, time.Now),
		}
	}
	if readErr != nil {
		// No one gets a response whose body is known to be broken.
		cancel()
		discard(resp)
		err = fmt.Errorf("%w: reading its body: %w", status, readErr)
	}
	if err != nil {
		cancel()
		return nil, permanentIf(!ex.replayable(), err)
	}
	var result error
	switch {
	case failed:
		result = permanentIf(!ex.replayable(), status)
	case resp.Body == http.NoBody:
		// Nothing to read: the exchange is over, and the caller gets
		// http.NoBody as the base gave it.
		cancel()
		s.release()
	case noBody(r, resp):
		// The base's own empty body stays the caller's to close, but the
		// exchange is over.
		s.release()
		resp.Body = newBody(resp.Body, cancel, nil)
	default:
		resp.Body = newBody(resp.Body, cancel, s)
	}
	// The body holds the slot now (a body buffered whole gave it back).
	handedOn = true

	ex.mu.Lock()
	if ex.finished {
		// No one will read it: the layers see it, closed.
		ex.mu.Unlock()
		discard(resp)
		return resp, result
	}
	ex.responses = append(ex.responses, resp)
	var superseded *http.Response
	if failed {
		superseded, ex.lastFail = ex.lastFail, resp
	}
	ex.mu.Unlock()
	if superseded != nil {
		ex.close(superseded)
	}
	return resp, result
}

func permanentIf(cond bool, err error) error {
	if cond {
		return resilience.Permanent(err)
	}
	return err
}

// dropLastFail closes the last failure response, if its body holds a slot
// of the Transport's Bulkhead, and forgets it.
func (ex *exchange) dropLastFail() {
	ex.mu.Lock()
	resp := ex.lastFail
	if resp == nil {
		ex.mu.Unlock()
		return
	}
	if b, ok := resp.Body.(*body); !ok || b.slot == nil || b.slot.done.Load() {
		ex.mu.Unlock()
		return
	}
	ex.lastFail = nil
	ex.mu.Unlock()
	ex.close(resp)
}

// close drains and closes resp, a response no one will read, and forgets it.
func (ex *exchange) close(resp *http.Response) {
	ex.mu.Lock()
	for i, r := range ex.responses {
		if r == resp {
			ex.responses = append(ex.responses[:i], ex.responses[i+1:]...)
			break
		}
	}
	ex.mu.Unlock()
	discard(resp)
}

// finish decides what the caller gets and closes every other response.
func (ex *exchange) finish(resp *http.Response, err error) (*http.Response, error) {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	ex.finished = true
	if !ex.bodyUsed && ex.req.Body != nil {
		ex.req.Body.Close() // the policies refused before any attempt
	}
	if err != nil {
		resp = nil
		if ex.req.Context().Err() == nil {
			resp = ex.lastFail // the policies gave up: the last response, intact
		}
	}
	for _, r := range ex.responses {
		if r != resp {
			discard(r)
		}
	}
	ex.responses = nil
	if resp == nil {
		if err == nil {
			err = errors.New("resiliencehttp: policy returned neither a response nor an error")
		}
		return nil, err
	}
	return resp, nil
}
