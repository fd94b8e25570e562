package adaptive_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/adaptive"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// wait bounds every wait of the HTTP tests: what should happen at once
// fails the test with a message after it.
const wait = 10 * time.Second

func recv[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(wait):
		t.Fatalf("after %v: %s", wait, what)
		panic("unreachable")
	}
}

// priorityFrom is a middleware in front of the limiter's that marks
// requests with "X-Priority: critical" as critical.
func priorityFrom(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Priority") == "critical" {
			r = r.WithContext(adaptive.ContextWithPriority(r.Context(), adaptive.Critical))
		}
		next.ServeHTTP(w, r)
	})
}

// A server sheds load through resiliencehttp.Middleware: requests over
// the limit are answered 503 with a Retry-After at once, without reaching
// the handler; critical requests get the share of the limit kept for
// them.
func TestMiddlewareShedsLoad(t *testing.T) {
	lim := adaptive.New(adaptive.WithMinLimit(4), adaptive.WithMaxLimit(4), adaptive.WithReserve(0.5), adaptive.WithName("api"))
	entered := make(chan string, 8)
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- r.URL.Path
		select {
		case <-release:
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "ok")
	})
	srv := httptest.NewServer(priorityFrom(resiliencehttp.Middleware(adaptive.Policy[struct{}](lim))(h)))
	defer srv.Close()
	var released bool
	defer func() { // a failed test must not leave handlers blocked in srv.Close
		if !released {
			close(release)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()

	type answer struct {
		Path, Body, RetryAfter string
		Code                   int
	}
	get := func(path, priority string) answer {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		if priority != "" {
			req.Header.Set("X-Priority", priority)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			return answer{Path: path, Body: err.Error()}
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return answer{path, string(b), resp.Header.Get("Retry-After"), resp.StatusCode}
	}
	answers := make(chan answer, 8)
	for i := range 2 { // normal requests: 2 of 4 may run (Reserve 0.5)
		path := fmt.Sprintf("/normal/%d", i)
		go func() { answers <- get(path, "") }()
		recv(t, entered, path+" never reached the handler")
	}
	shed := get("/normal/2", "")
	want := answer{Path: "/normal/2", Code: http.StatusServiceUnavailable, RetryAfter: "1", Body: "Service Unavailable\n"}
	if diff := cmp.Diff(want, shed); diff != "" {
		t.Fatalf("a third normal request (mismatch -want +got):\n%s", diff)
	}
	for i := range 2 { // critical requests use the rest
		path := fmt.Sprintf("/critical/%d", i)
		go func() { answers <- get(path, "critical") }()
		recv(t, entered, path+" never reached the handler")
	}
	if got := get("/critical/2", "critical"); got.Code != http.StatusServiceUnavailable {
		t.Fatalf("a critical request over the whole limit: %+v, want 503", got)
	}
	if s := lim.Stats(); s.InFlight != 4 || s.Refused != 2 {
		t.Fatalf("Stats %+v, want 4 in flight and 2 rejected", s)
	}
	released = true
	close(release)
	for range 4 {
		if a := recv(t, answers, "a request in the handler never answered"); a.Code != http.StatusOK || a.Body != "ok" {
			t.Errorf("%s: %+v, want 200 ok", a.Path, a)
		}
	}
	select {
	case p := <-entered:
		t.Errorf("%s reached the handler though it was shed", p)
	default:
	}
}
