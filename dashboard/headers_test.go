package dashboard

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/f0b5b96b/resilience/telemetry"
)

// The stream asks proxies not to buffer it (X-Accel-Buffering: no).
func TestStreamIsNotBuffered(t *testing.T) {
	d := New(telemetry.NewRegistry(), nil)
	rec := httptest.NewRecorder()
	d.ServeHTTP(rec, httptest.NewRequest(http.MethodHead, "/events", nil))
	if got := rec.Header().Get("X-Accel-Buffering"); got != "no" {
		t.Errorf("events: X-Accel-Buffering %q, want no", got)
	}
}

// The page's files are revalidated (no-cache) and never sniffed as
// another type (nosniff); a snapshot is never stored (no-store) and holds
// the tiles' history.
func TestResponseCachingAndSniffing(t *testing.T) {
	d := New(telemetry.NewRegistry(), nil)
	for _, c := range []struct {
		path                string
		cacheControl, sniff string
	}{
		{"/", "no-cache", "nosniff"},
		{"/app.js", "no-cache", "nosniff"},
		{"/style.css", "no-cache", "nosniff"},
		{"/snapshot.json", "no-store", ""},
	} {
		rec := httptest.NewRecorder()
		d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		h := rec.Header()
		if got := h.Get("Cache-Control"); got != c.cacheControl {
			t.Errorf("GET %s: Cache-Control %q, want %q", c.path, got, c.cacheControl)
		}
		if got := h.Get("X-Content-Type-Options"); got != c.sniff {
			t.Errorf("GET %s: X-Content-Type-Options %q, want %q", c.path, got, c.sniff)
		}
	}
}
