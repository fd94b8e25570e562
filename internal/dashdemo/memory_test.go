package dashdemo

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// newInMemory is New with the dependencies' server answering in memory:
// each attempt of each pipeline is served by d.serve on the caller's
// goroutine, so that a testing/synctest bubble runs the scenario on its
// fake clock. requests counts the attempts that reached the server, by
// path.
func newInMemory(t *testing.T, c Config) (d *Demo, requests func(path string) int) {
	t.Helper()
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	_ = d.srv.Close() // no network: its Serve goroutine ends
	s := &memServer{d: d, n: map[string]int{}}
	for _, dp := range d.deps {
		dp.client.Transport.(*resiliencehttp.Transport).Base = s
	}
	return d, func(path string) int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.n[path]
	}
}

type memServer struct {
	d  *Demo
	mu sync.Mutex
	n  map[string]int
}

func (s *memServer) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.n[req.URL.Path]++
	s.mu.Unlock()
	rec := httptest.NewRecorder()
	s.d.serve(rec, req)
	if err := req.Context().Err(); err != nil {
		return nil, err // the client gave up before the answer
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}
