package resiliencehttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/resiliencehttp"
)

// The handler's ResponseWriter flushes, and copies a body, through to the
// server's even when another middleware's ResponseWriter in between has no
// Flush or ReadFrom method of its own but unwraps to one that has (as
// http.ResponseController finds it).
func TestMiddlewareWriterReachesTheServersThroughUnwrap(t *testing.T) {
	rec := httptest.NewRecorder()
	h := resiliencehttp.Middleware(resilience.Policy[struct{}]{})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, err := w.(io.ReaderFrom).ReadFrom(io.LimitReader(strings.NewReader("streamed"), 8)); n != 8 || err != nil {
			t.Errorf("ReadFrom = %d, %v, want 8, nil", n, err)
		}
		w.(http.Flusher).Flush()
	}))
	h.ServeHTTP(wrappedWriter{rec}, httptest.NewRequest(http.MethodGet, "/", nil))
	if !rec.Flushed {
		t.Error("the handler's Flush did not reach the server's ResponseWriter")
	}
	if got := rec.Body.String(); got != "streamed" {
		t.Errorf("the server's ResponseWriter got %q, want %q", got, "streamed")
	}
	if rec.Code != http.StatusOK {
		t.Errorf("status %d, want 200", rec.Code)
	}
}
