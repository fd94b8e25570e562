package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// brokenConn is a stream's ResponseWriter whose connection fails to set a
// write deadline or to flush, as a closed one does.
type brokenConn struct {
	h                 http.Header
	deadline, flush   error
	writes, deadlines int
}

func (w *brokenConn) Header() http.Header         { return w.h }
func (w *brokenConn) WriteHeader(int)             {}
func (w *brokenConn) Write(b []byte) (int, error) { w.writes++; return len(b), nil }
func (w *brokenConn) FlushError() error           { return w.flush }
func (w *brokenConn) SetWriteDeadline(time.Time) error {
	w.deadlines++
	return w.deadline
}

// A stream ends at once, without waiting for its request's context or the
// next Interval, when its connection cannot take a write deadline (then
// without writing) or cannot flush what was written.
func TestStreamEndsWhenTheConnectionFails(t *testing.T) {
	closed := errors.New("use of closed network connection")
	for _, tt := range []struct {
		name       string
		w          *brokenConn
		wantWrites int
	}{
		{"write deadline", &brokenConn{h: http.Header{}, deadline: closed}, 0},
		{"flush", &brokenConn{h: http.Header{}, flush: closed}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := New(telemetry.NewRegistry(), &Options{Clock: clock.NewFake()})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan struct{})
				go func() {
					defer close(done)
					d.ServeHTTP(tt.w, httptest.NewRequestWithContext(ctx, http.MethodGet, "/events", nil))
				}()
				synctest.Wait()
				select {
				case <-done:
				default:
					cancel()
					<-done
					t.Error("the stream went on after its connection failed")
				}
				if tt.w.writes != tt.wantWrites || tt.w.deadlines != 1 {
					t.Errorf("%d writes after %d write deadlines, want %d after 1", tt.w.writes, tt.w.deadlines, tt.wantWrites)
				}
			})
		})
	}
}
