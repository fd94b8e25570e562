package resiliencehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// memTransport answers attempts in memory, so that a synctest bubble sees
// every wait (a wait on a real connection is not durable, and time in a
// bubble would not move). reply says how attempt n (from 1) is answered.
// Like net/http's transport, it closes the request's body, and its waits,
// including a body's stalled read, end with the request's context.
type memTransport struct {
	reply   func(n int) memReply
	entered chan<- int // if not nil, told n as attempt n starts

	mu     sync.Mutex
	n      int
	bodies []*memBody
	live   int // exchanges in flight: from the round trip's start to its body's end
	peak   int // the most exchanges in flight at once
}

type memReply struct {
	status int             // 0: no headers ever; the round trip waits for the context
	body   string          // what the body gives first
	stall  bool            // after body, the body waits for the context instead of ending
	gate   <-chan struct{} // if not nil, the headers wait for it to close
	rest   <-chan struct{} // if not nil, after body the body waits for it to close (or the context), then ends
	big    bool            // body is larger than what the Transport buffers of a failure
	header http.Header     // the response's header; nil: none
}

func (m *memTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_ = r.Body.Close()
	}
	m.mu.Lock()
	m.n++
	n := m.n
	m.live++
	m.peak = max(m.peak, m.live)
	m.mu.Unlock()
	if m.entered != nil {
		m.entered <- n
	}
	rep := m.reply(n)
	ctx := r.Context()
	if rep.status == 0 {
		<-ctx.Done()
		m.end()
		return nil, ctx.Err()
	}
	if rep.gate != nil {
		select {
		case <-rep.gate:
		case <-ctx.Done():
			m.end()
			return nil, ctx.Err()
		}
	}
	text := rep.body
	if rep.big {
		text += strings.Repeat("x", 100<<10)
	}
	header := rep.header.Clone()
	if header == nil {
		header = http.Header{}
	}
	b := &memBody{m: m, ctx: ctx, r: strings.NewReader(text), stall: rep.stall, rest: rep.rest, closed: make(chan struct{})}
	m.mu.Lock()
	m.bodies = append(m.bodies, b)
	m.mu.Unlock()
	return &http.Response{
		StatusCode: rep.status,
		Status:     fmt.Sprintf("%d %s", rep.status, http.StatusText(rep.status)),
		Proto:      "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        header,
		Body:          b,
		ContentLength: -1,
		Request:       r,
	}, nil
}

// attempts returns how many round trips started.
func (m *memTransport) attempts() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

// end records the end of an exchange.
func (m *memTransport) end() {
	m.mu.Lock()
	m.live--
	m.mu.Unlock()
}

// inFlight returns how many exchanges are in flight now, and the most
// there were at once.
func (m *memTransport) inFlight() (now, peak int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live, m.peak
}

// open returns how many of the response bodies handed out are not closed,
// and how many were handed out.
func (m *memTransport) open() (open, all int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, b := range m.bodies {
		select {
		case <-b.closed:
		default:
			open++
		}
	}
	return open, len(m.bodies)
}

type memBody struct {
	m      *memTransport
	ctx    context.Context
	r      *strings.Reader
	stall  bool
	rest   <-chan struct{}
	once   sync.Once // closes closed
	ended  sync.Once // ends the exchange: at the body's end, an error, or Close
	closed chan struct{}
}

var errReadClosed = errors.New("read on closed body")

func (b *memBody) Read(p []byte) (int, error) {
	n, err := b.read(p)
	if err != nil {
		b.ended.Do(b.m.end)
	}
	return n, err
}

func (b *memBody) read(p []byte) (int, error) {
	select {
	case <-b.closed:
		return 0, errReadClosed
	default:
	}
	if b.r.Len() > 0 {
		return b.r.Read(p)
	}
	if b.rest != nil {
		select {
		case <-b.rest:
			return 0, io.EOF
		case <-b.ctx.Done():
			return 0, b.ctx.Err()
		case <-b.closed:
			return 0, errReadClosed
		}
	}
	if !b.stall {
		return 0, io.EOF
	}
	select {
	case <-b.ctx.Done():
		return 0, b.ctx.Err()
	case <-b.closed:
		return 0, errReadClosed
	}
}

func (b *memBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	b.ended.Do(b.m.end)
	return nil
}
