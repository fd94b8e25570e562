package resiliencehttp_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/bulkhead"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// A handler that hijacks the connection has answered, whatever it calls
// afterwards: a WriteHeader on the ResponseWriter it took the connection
// from (net/http refuses it) is not the answer, and a guard sees a
// success.
func TestMiddlewareHijackedThenWriteHeaderIsASuccess(t *testing.T) {
	seen := make(chan error, 1)
	spy := resilience.New("spy", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
		v, err := next.Call(ctx)
		seen <- err
		return v, err
	})
	srv := httptest.NewUnstartedServer(resiliencehttp.Middleware(spy)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("Hijack: %v", err)
			return
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		buf.Flush()
		conn.Close()
		w.WriteHeader(http.StatusInternalServerError) // refused by net/http: the connection is gone
	})))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	defer srv.Close()
	c := srv.Client()
	c.Timeout = wait
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := recv(t, seen, "the guard never saw the hijacking handler return"); err != nil {
		t.Errorf("guard saw %v for a hijacked connection, want a success", err)
	}
}

// Over a real connection, whose ResponseWriter can hijack, an inner
// Middleware's refusal still reaches the outer Middleware's guards as the
// refusal, not as the handler's 503.
func TestStackedMiddlewaresPassRefusalsOutOverAConnection(t *testing.T) {
	full := bulkhead.New(1)
	full.TryAcquire()
	errs := make(chan error, 1)
	inner := resiliencehttp.Middleware(bulkhead.Policy[struct{}](full))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the handler ran")
	}))
	srv := httptest.NewServer(resiliencehttp.Middleware(spyErrs(errs))(inner))
	defer srv.Close()
	c := srv.Client()
	c.Timeout = wait
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if diff := cmp.Diff(http.StatusServiceUnavailable, resp.StatusCode); diff != "" {
		t.Errorf("status mismatch (-want +got):\n%s", diff)
	}
	if err := recv(t, errs, "the outer guard never saw the request"); !errors.Is(err, bulkhead.ErrFull) || !errors.Is(err, resilience.ErrRefused) {
		t.Errorf("the outer guard saw %v, want the inner refusal (bulkhead.ErrFull)", err)
	}
}

// hijackWriter is a server's ResponseWriter that can hijack, or fails to
// (as one whose connection is already gone does).
type hijackWriter struct {
	*httptest.ResponseRecorder
	err error
}

func (w hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.err != nil {
		return nil, nil, w.err
	}
	c, _ := net.Pipe()
	return c, bufio.NewReadWriter(bufio.NewReader(c), bufio.NewWriter(c)), nil
}

// Hijacking makes the handler's answer a success only when it hijacks
// before answering: a 500 written before the Hijack is the answer the
// client got, and a Hijack that fails takes nothing over, so the 500
// written after it is the answer.
func TestMiddlewareHijackAfterOrFailedKeepsTheAnswer(t *testing.T) {
	for _, tt := range []struct {
		name    string
		err     error
		handler func(w http.ResponseWriter)
	}{
		{"500 then Hijack", nil, func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusInternalServerError)
			if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
				c.Close()
			}
		}},
		{"failed Hijack then 500", errors.New("connection gone"), func(w http.ResponseWriter) {
			if _, _, err := w.(http.Hijacker).Hijack(); err == nil {
				t.Error("Hijack succeeded, want its error")
			}
			w.WriteHeader(http.StatusInternalServerError)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var seen error
			spy := resilience.New("spy", func(ctx context.Context, next resilience.Next[struct{}]) (struct{}, error) {
				v, err := next.Call(ctx)
				seen = err
				return v, err
			})
			h := resiliencehttp.Middleware(spy)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { tt.handler(w) }))
			h.ServeHTTP(hijackWriter{httptest.NewRecorder(), tt.err}, httptest.NewRequest(http.MethodGet, "/", nil))
			var se *resiliencehttp.StatusError
			if !errors.As(seen, &se) || se.StatusCode != http.StatusInternalServerError {
				t.Errorf("guard saw %v, want a *StatusError of 500", seen)
			}
		})
	}
}
