package resiliencehttp_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/policy/hedge"
)

func TestDiscardingALoserNeverDelaysTheCaller(t *testing.T) {
	// The first attempt's response is one the hedge does not accept (it is
	// stale), and its body stalls after a few bytes; the hedge's second
	// attempt wins. RoundTrip must return the winner while the loser's body
	// is still stalled, and the loser must still be closed, soon, without
	// anyone reading it.
	release := make(chan struct{}) // the stalled body may end; closed when the test ends
	loserGone := make(chan struct{})
	srv, _ := server(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("X-Stale", "1")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, "stale")
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
				close(loserGone)
			}
			return
		}
		fmt.Fprint(w, "fresh")
	})
	defer close(release)
	p := hedge.New[*http.Response](time.Hour, hedge.WithAccept(func(resp *http.Response, err error) bool {
		return err == nil && resp.Header.Get("X-Stale") == ""
	}))
	c := client(srv, p)
	type result struct {
		resp *http.Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := c.Get(srv.URL)
		done <- result{resp, err}
	}()
	res := recv(t, done, "Get has not returned: discarding the losing attempt, whose body stalls, delays the caller")
	if res.err != nil {
		t.Fatalf("Get: %v", res.err)
	}
	if got := readAll(t, res.resp); got != "fresh" {
		t.Errorf("body %q, want the winner's %q", got, "fresh")
	}
	recv(t, loserGone, "the server still serves the losing attempt: its stalled body was never closed")
}
