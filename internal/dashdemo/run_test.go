package dashdemo

import (
	"context"
	"io"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// callCounter counts, per dependency, the calls Run makes through its
// client, the calls in flight, and the response bodies not yet closed.
type callCounter struct {
	mu       sync.Mutex
	calls    map[string]int
	inFlight int
	open     int
}

type countingTransport struct {
	c    *callCounter
	name string
	next http.RoundTripper
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.c.mu.Lock()
	t.c.calls[t.name]++
	t.c.inFlight++
	t.c.mu.Unlock()
	resp, err := t.next.RoundTrip(req)
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.c.inFlight--
	if err == nil {
		t.c.open++
		resp.Body = closeCounter{resp.Body, t.c}
	}
	return resp, err
}

type closeCounter struct {
	io.ReadCloser
	c *callCounter
}

func (b closeCounter) Close() error {
	b.c.mu.Lock()
	b.c.open--
	b.c.mu.Unlock()
	return b.ReadCloser.Close()
}

// Run calls each dependency Rate times a second, starts with Healthy
// (calling onPhase, the Demo's Phase already the new one) and moves the
// prices server to the next phase every Phase, in a loop; it returns when
// its context is done, with no call in flight and every response's body
// closed. A second Run starts again at Healthy.
func TestRunPhasesAndRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _ := newInMemory(t, Config{Rate: 10, Phase: time.Second})
		defer d.Close()
		cc := &callCounter{calls: map[string]int{}}
		for _, dp := range d.deps {
			dp.client.Transport = countingTransport{cc, dp.name, dp.client.Transport}
		}
		run := func(within time.Duration) []Phase {
			var phases []Phase
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			d.Run(ctx, func(p Phase) {
				if got := d.Phase(); got != p {
					t.Errorf("onPhase(%v) with the Demo's Phase %v", p, got)
				}
				phases = append(phases, p)
			})
			cc.mu.Lock()
			defer cc.mu.Unlock()
			if cc.inFlight != 0 || cc.open != 0 {
				t.Errorf("Run returned with %d calls in flight and %d bodies open, want none", cc.inFlight, cc.open)
			}
			return phases
		}

		got := run(3550 * time.Millisecond)
		if diff := cmp.Diff([]Phase{Healthy, Failing, Hanging, Recovered}, got); diff != "" {
			t.Errorf("phases in 3.55s mismatch (-want +got):\n%s", diff)
		}
		want := map[string]int{"prices": 35, "inventory": 35, "search": 35, "recommendations": 35} // a tick each 100ms
		if diff := cmp.Diff(want, cc.calls); diff != "" {
			t.Errorf("calls in 3.55s at 10/s mismatch (-want +got):\n%s", diff)
		}

		got = run(1550 * time.Millisecond)
		if diff := cmp.Diff([]Phase{Healthy, Failing}, got); diff != "" {
			t.Errorf("phases of a second Run mismatch (-want +got):\n%s", diff)
		}
	})
}
