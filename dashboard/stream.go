package dashboard

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// writeTimeout bounds the time a stream's writes may wait for the client
// in all: a client that has kept them waiting this long since it last took
// one at once is dropped, so it cannot hold its goroutine.
const writeTimeout = 10 * time.Second

// reconnectMillis is the reconnection delay the stream asks of the
// browser (the "retry:" field).
const reconnectMillis = 1000

// serveEvents serves the stream: a "snapshot" event (with history) at
// once, then an "update" event (without) at the start of each Interval
// slot, until the client goes away or a write fails. It runs on the
// request's goroutine and starts none.
func (d *Dashboard) serveEvents(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies: do not buffer the stream
	if r.Method == http.MethodHead {
		return
	}
	out := streamWriter{rc: http.NewResponseController(w), w: w, timeout: d.writeTimeout, now: d.wallNow}
	ctx := r.Context()

	buf := []byte("retry: " + strconv.Itoa(reconnectMillis) + "\n")
	var seq uint64
	d.read(d.clock.Now(), true, func(data []byte, s uint64) {
		seq = s
		buf = appendEvent(buf, "snapshot", s, data)
	})
	if !out.send(buf) {
		return
	}
	buf = nil // the history made it large; updates are smaller
	timer := d.clock.NewTimer(untilNext(d.clock.Now()))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C():
		}
		now := d.clock.Now()
		fresh := false
		d.read(now, false, func(data []byte, s uint64) {
			if s != seq { // else woken early: no new snapshot yet
				seq, fresh = s, true
				buf = appendEvent(buf[:0], "update", s, data)
			}
		})
		timer.Reset(untilNext(now))
		if fresh && !out.send(buf) {
			return
		}
	}
}

// appendEvent appends one server-sent event: its name, its id (the
// snapshot's seq) and its data, one line of JSON.
func appendEvent(b []byte, event string, id uint64, data []byte) []byte {
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, "\nid: "...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// streamWriter writes a stream's events, and drops a client that keeps
// its writes waiting: all its writes share one budget of timeout, counted
// from the start of the first write that waited (took a tenth of timeout
// or more) since the client last took one at once. A write that waits
// only delays the next one's deadline by the time it took, as a deadline
// renewed at each write would.
type streamWriter struct {
	rc      *http.ResponseController
	w       http.ResponseWriter
	timeout time.Duration
	now     func() time.Time // the wall clock of the connection's deadlines
	stalled time.Time        // the start of the first write that waited, since the client was caught up; zero if it is
}

// send writes one event and flushes it, by the stream's deadline; it
// reports whether the client took it.
func (s *streamWriter) send(ev []byte) bool {
	start := s.now()
	since := s.stalled
	if since.IsZero() {
		since = start
	}
	if err := s.rc.SetWriteDeadline(since.Add(s.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	if _, err := s.w.Write(ev); err != nil {
		return false
	}
	if s.rc.Flush() != nil {
		return false
	}
	switch {
	case s.now().Sub(start) < s.timeout/10:
		s.stalled = time.Time{} // taken at once: the client is caught up
	case s.stalled.IsZero():
		s.stalled = start
	}
	return true
}
