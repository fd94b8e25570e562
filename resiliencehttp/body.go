package resiliencehttp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience/policy/bulkhead"
)

// drainLimit is how much of a discarded response body is read so that its
// connection can be reused; a longer body is closed unread.
const drainLimit = 64 << 10

// drainTimeout bounds the time a discarded body is drained for, so that a
// body that stalls is closed soon (its connection is then lost) instead of
// holding a goroutine and a connection for as long as the request's
// context lives.
const drainTimeout = 250 * time.Millisecond

// buffer reads up to drainLimit bytes of resp's body, and returns the
// error of that read, if any (resp is then for discarding). When that is
// all of the body, the network body is closed and replaced by the bytes
// read; otherwise the body reads those bytes and then the rest from the
// network. Either way closing resp.Body releases the attempt's context.
//
// The slot s (nil if none) is given back once the exchange is over: at once
// when the body was read whole, else when the body is read to its end or
// closed. A body that is http.NoBody is left so.
func buffer(resp *http.Response, cancel context.CancelFunc, s *slot) error {
	if resp.Body == http.NoBody {
		cancel()
		s.release()
		return nil
	}
	buf, err := io.ReadAll(io.LimitReader(resp.Body, drainLimit+1))
	switch {
	case err != nil:
		return err
	case len(buf) <= drainLimit:
		_ = resp.Body.Close()
		cancel()
		s.release()
		resp.Body = bufferedBody{bytes.NewReader(buf)}
	default:
		resp.Body = &body{ReadCloser: readCloser{io.MultiReader(bytes.NewReader(buf), resp.Body), resp.Body}, cancel: cancel, slot: s}
	}
	return nil
}

// noBody reports whether resp, the response to r, has no body by the
// protocol: the answer to a HEAD, a 204 No Content, a 304 Not Modified, or
// one of Content-Length 0. A body that can be written to (a 101 Switching
// Protocols connection) is a body.
func noBody(r *http.Request, resp *http.Response) bool {
	if _, ok := resp.Body.(io.Writer); ok {
		return false
	}
	return r.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent ||
		resp.StatusCode == http.StatusNotModified || resp.ContentLength == 0
}

// bufferedBody is a whole response body held in memory.
type bufferedBody struct{ *bytes.Reader }

func (bufferedBody) Close() error { return nil }

type readCloser struct {
	io.Reader
	io.Closer
}

// discard closes resp, a response no one will read, without waiting for
// the network: a body that needs no reading (held in memory, cut off by its
// cancelled context, or the unbuffered rest of a failure's body, which
// costs its connection anyway) is closed at once; the body of a success,
// still on the network, is drained (up to drainLimit bytes, for at most
// drainTimeout) so that its connection can be reused, and closed, by a
// goroutine of its own. A loser's body that stalls therefore never delays
// the winner.
func discard(resp *http.Response) {
	switch b := resp.Body.(type) {
	case bufferedBody:
		return
	case *body:
		if b.drain {
			go b.discard()
			return
		}
	}
	_ = resp.Body.Close()
}

// body is a response body whose Close also releases the attempt's context,
// and which holds the attempt's Bulkhead slot, if any, until the exchange
// is over: until a read returns an error (io.EOF at the end) or the body is
// closed, whichever comes first.
type body struct {
	io.ReadCloser
	cancel context.CancelFunc
	slot   *slot // nil if none
	drain  bool  // discard drains it first (the body of a success, still on the network)
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.slot.release()
	}
	return n, err
}

func (b *body) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	b.slot.release()
	return err
}

// slot is a slot of the Transport's Bulkhead, held by one exchange.
type slot struct {
	b    *bulkhead.Bulkhead
	done atomic.Bool
}

// release gives the slot back, the first time it is called; s may be nil.
func (s *slot) release() {
	if s != nil && s.done.CompareAndSwap(false, true) {
		s.b.Release()
	}
}

// discard drains b, bounded by drainLimit and drainTimeout, and closes it.
// The timeout cancels the body's context, which ends a stalled read of a
// body from net/http (and of any Base whose bodies honour the request's
// context).
func (b *body) discard() {
	t := time.AfterFunc(drainTimeout, b.cancel)
	_, _ = io.CopyN(io.Discard, b.ReadCloser, drainLimit)
	t.Stop()
	_ = b.Close()
}

// rwBody keeps a 101 Switching Protocols body writable.
type rwBody struct {
	body
	w io.Writer
}

func (b *rwBody) Write(p []byte) (int, error) { return b.w.Write(p) }

// newBody wraps the body of a success.
func newBody(rc io.ReadCloser, cancel context.CancelFunc, s *slot) io.ReadCloser {
	if w, ok := rc.(io.Writer); ok {
		return &rwBody{body: body{ReadCloser: rc, cancel: cancel, slot: s}, w: w}
	}
	return &body{ReadCloser: rc, cancel: cancel, slot: s, drain: true}
}
