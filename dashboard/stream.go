package dashboard

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// writeTimeout bounds each write to a stream's client: one that reads
// nothing for this long is dropped, so it cannot hold its goroutine.
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
	rc := http.NewResponseController(w)
	ctx := r.Context()

	buf := []byte("retry: " + strconv.Itoa(reconnectMillis) + "\n")
	var seq uint64
	d.read(d.clock.Now(), true, func(data []byte, s uint64) {
		seq = s
		buf = appendEvent(buf, "snapshot", s, data)
	})
	if !send(rc, w, buf) {
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
		if fresh && !send(rc, w, buf) {
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

// send writes one event and flushes it, within writeTimeout; it reports
// whether the client took it.
func send(rc *http.ResponseController, w http.ResponseWriter, ev []byte) bool {
	if err := rc.SetWriteDeadline(time.Now().Add(writeTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	if _, err := w.Write(ev); err != nil {
		return false
	}
	return rc.Flush() == nil
}
