package dashboard

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// sse is one server-sent event as the stream frames it.
type sse struct {
	retry, name, id, data string
}

// readEvents parses the stream strictly: each event is "event:", "id:",
// "data:" lines then a blank line, the first one preceded by "retry:".
// It sends the events on the channel it returns, and an error (then
// closes) on anything else or at the end of the stream.
func readEvents(body io.Reader) (<-chan sse, <-chan error) {
	events, errc := make(chan sse, 16), make(chan error, 1)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(body)
		sc.Buffer(nil, 64<<20)
		var ev sse
		field := 0 // the next line expected: 0 event (or retry), 1 id, 2 data, 3 blank
		for sc.Scan() {
			line := sc.Text()
			k, v, _ := strings.Cut(line, ": ")
			switch {
			case field == 0 && k == "retry" && ev.retry == "":
				ev.retry = v
			case field == 0 && k == "event":
				ev.name, field = v, 1
			case field == 1 && k == "id":
				ev.id, field = v, 2
			case field == 2 && k == "data":
				ev.data, field = v, 3
			case field == 3 && line == "":
				events <- ev
				ev, field = sse{}, 0
			default:
				errc <- fmt.Errorf("unexpected line %.80q (expecting field %d)", line, field)
				return
			}
		}
		errc <- fmt.Errorf("stream ended: %v", sc.Err())
	}()
	return events, errc
}

// stream opens the dashboard's stream at url.
func stream(t *testing.T, c *http.Client, url string) (<-chan sse, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/events", nil)
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET events: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "text/event-stream" {
		cancel()
		t.Fatalf("GET events: %s, Content-Type %q; want 200 text/event-stream", resp.Status, ct)
	}
	if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("GET events: Cache-Control %q, want no-store", cc)
	}
	events, _ := readEvents(resp.Body)
	return events, func() { cancel(); resp.Body.Close() }
}

func newStreamServer(t *testing.T) (*Dashboard, *clock.Fake, *httptest.Server, *http.Client) {
	t.Helper()
	f := clock.NewFake()
	f.Set(time.Date(2030, 1, 1, 0, 0, 0, 300*int(time.Millisecond), time.UTC))
	reg := telemetry.NewRegistry()
	if err := reg.Register(breaker.New(breaker.WithName("db"), breaker.WithClock(f))); err != nil {
		t.Fatal(err)
	}
	d := New(reg, &Options{Clock: f})
	srv := httptest.NewServer(d)
	c := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(func() { closeServer(t, srv, c) })
	return d, f, srv, c
}

// closeServer closes srv, which waits for its handlers to return, within
// patience, and c's idle connections.
func closeServer(t *testing.T, srv *httptest.Server, c *http.Client) {
	returns(t, "closing the server (its stream handlers must return)", func() struct{} {
		srv.Close()
		return struct{}{}
	})
	c.CloseIdleConnections()
}

// The stream: "retry:", a "snapshot" event with history at once, then an
// "update" event without history at the start of each second.
func TestStreamFraming(t *testing.T) {
	_, f, srv, c := newStreamServer(t)
	events, cancel := stream(t, c, srv.URL)
	defer cancel()

	first := recv(t, events, "the first event")
	if first.retry != "1000" || first.name != "snapshot" || first.id != "1" {
		t.Fatalf("first event: retry %q, event %q, id %q; want 1000, snapshot, 1", first.retry, first.name, first.id)
	}
	s := decode(t, []byte(first.data))
	if len(s.Guards) != 1 || s.Guards[0].History == nil || s.Seq != 1 {
		t.Fatalf("first snapshot %+v: want seq 1, one tile, with history", s)
	}

	for i := 2; i <= 3; i++ {
		blockUntil(t, f, 1) // the stream waits for the next second
		f.Advance(untilNext(f.Now()))
		ev := recv(t, events, fmt.Sprintf("update %d", i))
		if ev.retry != "" || ev.name != "update" || ev.id != fmt.Sprint(i) {
			t.Fatalf("event %d: retry %q, event %q, id %q; want no retry, update, %d", i, ev.retry, ev.name, ev.id, i)
		}
		if s := decode(t, []byte(ev.data)); s.Seq != uint64(i) || s.Guards[0].History != nil || s.Guards[0].RefusalsPerSec == nil {
			t.Fatalf("update %d: %+v; want seq %d, rates, no history", i, s, i)
		}
	}
}

// Clients share snapshots: one per second, the same bytes for all.
func TestStreamSharesSnapshots(t *testing.T) {
	_, f, srv, c := newStreamServer(t)
	a, cancelA := stream(t, c, srv.URL)
	defer cancelA()
	b, cancelB := stream(t, c, srv.URL)
	defer cancelB()
	ea, eb := recv(t, a, "client a's snapshot"), recv(t, b, "client b's snapshot")
	if ea.id != "1" || eb.id != "1" {
		t.Fatalf("snapshot ids %s and %s, want 1 and 1 (one snapshot for both)", ea.id, eb.id)
	}
	blockUntil(t, f, 2)
	f.Advance(untilNext(f.Now()))
	ua, ub := recv(t, a, "client a's update"), recv(t, b, "client b's update")
	if ua.id != "2" || ub.id != "2" || ua.data != ub.data {
		t.Fatalf("updates %s and %s (same data: %v), want both 2 with the same data", ua.id, ub.id, ua.data == ub.data)
	}
}

// streamGoroutines counts the goroutines in serveEvents, and those that
// package dashboard started.
func streamGoroutines() (serving, started int) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "dashboard.(*Dashboard).serveEvents") {
			serving++
		}
		if strings.Contains(g, "created by github.com/f0b5b96b/resilience/dashboard.") && !strings.Contains(g, "readEvents") {
			started++
		}
	}
	return serving, started
}

// Each client holds one goroutine, its request's, and none is left when
// it goes away.
func TestStreamEndsWhenClientLeaves(t *testing.T) {
	f := clock.NewFake()
	d := New(telemetry.NewRegistry(), &Options{Clock: f})
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1)
		defer wg.Done()
		d.ServeHTTP(w, r)
	}))
	c := &http.Client{Transport: &http.Transport{}}
	defer func() {
		closeServer(t, srv, c)
		goleak.VerifyNone(t)
	}()

	const clients = 3
	var cancels []func()
	for i := range clients {
		events, cancel := stream(t, c, srv.URL)
		cancels = append(cancels, cancel)
		recv(t, events, fmt.Sprintf("client %d's snapshot", i))
	}
	blockUntil(t, f, clients)
	if serving, started := streamGoroutines(); serving != clients || started != 0 {
		t.Fatalf("with %d clients: %d goroutines serve streams and the package started %d; want %d and 0", clients, serving, started, clients)
	}
	for _, cancel := range cancels {
		cancel()
	}
	waitGroup(t, &wg, "the stream handlers to return after their clients left")
	deadline := time.Now().Add(patience)
	for {
		serving, started := streamGoroutines()
		if serving == 0 && started == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v after the clients left, %d goroutines still serve streams, %d started by the package", patience, serving, started)
		}
		time.Sleep(10 * time.Millisecond) // polling the goroutine list, bounded by the deadline
	}
	if n := f.Waiters(); n != 0 {
		t.Fatalf("%d timers still armed after the clients left, want 0", n)
	}
}

// failingWriter is a ResponseWriter whose client is gone: writes fail
// after the first n, though the request's context never ends.
type failingWriter struct {
	h      http.Header
	n      int
	writes int
}

func (w *failingWriter) Header() http.Header { return w.h }
func (w *failingWriter) WriteHeader(int)     {}
func (w *failingWriter) Flush()              {}
func (w *failingWriter) Write(b []byte) (int, error) {
	w.writes++
	if w.writes > w.n {
		return 0, errors.New("broken pipe")
	}
	return len(b), nil
}

// A stream whose writes fail ends, even if its request's context does
// not.
func TestStreamEndsOnWriteError(t *testing.T) {
	f := clock.NewFake()
	d := New(telemetry.NewRegistry(), &Options{Clock: f})
	w := &failingWriter{h: http.Header{}, n: 1}
	r := httptest.NewRequest(http.MethodGet, "/events", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.ServeHTTP(w, r)
	}()
	blockUntil(t, f, 1) // the first event was written
	f.Advance(time.Second)
	recv(t, done, "the stream to end after a failed write")
	if w.writes != 2 {
		t.Fatalf("%d writes, want 2 (the snapshot, the failed update)", w.writes)
	}
	if f.Waiters() != 0 {
		t.Fatal("the stream's timer is still armed after it ended")
	}
}
