package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// stallingWriter is a ResponseWriter whose client keeps each write waiting
// as its script says, in virtual time: the connection's wall clock is the
// dashboard's fake clock plus the time writes have waited. A write that
// would wait past the deadline set with SetWriteDeadline fails there, as
// a net.Conn's does.
type stallingWriter struct {
	h     http.Header
	f     *clock.Fake
	waits []time.Duration // the i-th write waits waits[i]; past the script, none

	mu       sync.Mutex
	waited   time.Duration
	deadline time.Time
	attempts int // writes tried
	taken    int // writes the client took
}

func (w *stallingWriter) Header() http.Header { return w.h }
func (w *stallingWriter) WriteHeader(int)     {}
func (w *stallingWriter) Flush()              {}

func (w *stallingWriter) wallNow() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f.Now().Add(w.waited)
}

func (w *stallingWriter) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deadline = t
	return nil
}

func (w *stallingWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var wait time.Duration
	if w.attempts < len(w.waits) {
		wait = w.waits[w.attempts]
	}
	w.attempts++
	now := w.f.Now().Add(w.waited)
	if !w.deadline.IsZero() && now.Add(wait).After(w.deadline) {
		w.waited += max(w.deadline.Sub(now), 0)
		return 0, os.ErrDeadlineExceeded
	}
	w.waited += wait
	w.taken++
	return len(b), nil
}

func (w *stallingWriter) counts() (attempts, taken int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.attempts, w.taken
}

// serveStalling serves the stream to w, on a dashboard whose clock is w's
// fake clock and whose stream's wall clock is w's, and returns the
// request's cancel and a channel closed when the stream ends.
func serveStalling(t *testing.T, w *stallingWriter) (context.CancelFunc, <-chan struct{}) {
	t.Helper()
	d := New(telemetry.NewRegistry(), &Options{Clock: w.f})
	d.wallNow = w.wallNow
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/events", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.ServeHTTP(w, r)
	}()
	return cancel, done
}

// A client that keeps the stream's writes waiting is dropped once they
// have waited writeTimeout (10 s) in all, though no single write waited
// that long: writes that each wait 6 s are dropped at the second.
func TestStreamDropsClientStalledTenSecondsInAll(t *testing.T) {
	f := clock.NewFake()
	w := &stallingWriter{h: http.Header{}, f: f, waits: []time.Duration{6 * time.Second, 6 * time.Second}}
	cancel, done := serveStalling(t, w)
	defer cancel()
	blockUntil(t, f, 1) // the snapshot was taken, after 6 s
	f.Advance(untilNext(f.Now()))
	recv(t, done, "the stream to end at the second write")
	attempts, taken := w.counts()
	if diff := cmp.Diff([]int{2, 1}, []int{attempts, taken}); diff != "" {
		t.Errorf("writes tried, taken mismatch (-want +got):\n%s", diff)
	}
	if f.Waiters() != 0 {
		t.Error("the stream's timer is still armed after it ended")
	}
}

// A write that waits forever fails at the deadline: the client is dropped
// writeTimeout after the write began.
func TestStreamDropsClientWhoseWriteStaysBlocked(t *testing.T) {
	f := clock.NewFake()
	w := &stallingWriter{h: http.Header{}, f: f, waits: []time.Duration{time.Hour}}
	cancel, done := serveStalling(t, w)
	defer cancel()
	recv(t, done, "the stream to end at its first write")
	if attempts, taken := w.counts(); attempts != 1 || taken != 0 || w.waited != writeTimeout {
		t.Errorf("%d writes tried, %d taken, after waiting %v; want 1, 0, %v", attempts, taken, w.waited, writeTimeout)
	}
}

// A client that catches up (takes a write at once) starts a new budget:
// writes that wait 6 s every other write, and a stream that runs past
// 10 s, keep it.
func TestStreamKeepsClientThatCatchesUp(t *testing.T) {
	f := clock.NewFake()
	waits := make([]time.Duration, 16)
	for i := 0; i < len(waits); i += 2 {
		waits[i] = 6 * time.Second
	}
	w := &stallingWriter{h: http.Header{}, f: f, waits: waits}
	cancel, done := serveStalling(t, w)
	for range len(waits) - 1 {
		blockUntil(t, f, 1)
		f.Advance(untilNext(f.Now()))
	}
	blockUntil(t, f, 1)
	select {
	case <-done:
		t.Fatal("the stream ended, though its client caught up after each wait")
	default:
	}
	cancel()
	recv(t, done, "the stream to end when its request's context did")
	if attempts, taken := w.counts(); attempts != len(waits) || taken != len(waits) {
		t.Errorf("%d writes tried, %d taken; want %d and %d", attempts, taken, len(waits), len(waits))
	}
}

// Measure rejects a name that is not valid UTF-8, naming itself.
func TestMeasureRejectsInvalidUTF8Name(t *testing.T) {
	d := New(telemetry.NewRegistry(), nil)
	got := func() (msg any) {
		defer func() { msg = recover() }()
		Measure[int](d, "db\xff")
		return nil
	}()
	if want := `dashboard: Measure("db\xff"): name must be valid UTF-8`; got != want {
		t.Errorf("panic %v, want %q", got, want)
	}
}
