package resiliencehttp

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// recorder is the ResponseWriter a handler gets from Middleware: it notes
// the status of the handler's answer and passes everything on.
type recorder struct {
	http.ResponseWriter
	status  int   // the final status written; 0 while none is
	refused error // if not nil, a Middleware inside answered with this refusal
}

// statusHijacked is the status of a handler that took over the
// connection: not a failure.
const statusHijacked = -1

// writer returns rec as the handler's ResponseWriter, with a Hijack method
// if and only if the server's ResponseWriter has one, so that a handler's
// type assertion tells the truth.
func (rec *recorder) writer() http.ResponseWriter {
	if _, ok := rec.ResponseWriter.(http.Hijacker); ok {
		return hijackRecorder{rec}
	}
	return rec
}

func (rec *recorder) WriteHeader(code int) {
	// 1xx answers other than 101 are informational: the final status is
	// still to come.
	if rec.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		rec.status = code
	}
	rec.ResponseWriter.WriteHeader(code)
}

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.ResponseWriter.Write(b)
}

// Flush sends what is buffered (the headers at least, which makes the
// status 200 if none was written).
func (rec *recorder) Flush() {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	if f, ok := rec.ResponseWriter.(http.Flusher); ok {
		f.Flush()
		return
	}
	_ = http.NewResponseController(rec.ResponseWriter).Flush()
}

// ReadFrom lets io.Copy to the handler's ResponseWriter use the server's
// own ReadFrom (sendfile), as it would without the Middleware.
func (rec *recorder) ReadFrom(src io.Reader) (int64, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return io.Copy(rec.ResponseWriter, src)
}

// Unwrap returns the server's ResponseWriter, for http.ResponseController.
func (rec *recorder) Unwrap() http.ResponseWriter { return rec.ResponseWriter }

// hijackRecorder is a recorder whose server's ResponseWriter can hijack.
type hijackRecorder struct{ *recorder }

func (h hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := h.ResponseWriter.(http.Hijacker).Hijack()
	if err == nil && h.status == 0 {
		h.status = statusHijacked
	}
	return conn, rw, err
}
