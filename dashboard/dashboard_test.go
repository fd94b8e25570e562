package dashboard

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/f0b5b96b/resilience/telemetry"
)

// The handler serves by the last path element, so it works mounted
// under a prefix, with or without StripPrefix.
func TestRoutes(t *testing.T) {
	d := New(telemetry.NewRegistry(), nil)
	mux := http.NewServeMux()
	mux.Handle("/", d)
	mux.Handle("/ops/dashboard/", d)
	mux.Handle("/stripped/", http.StripPrefix("/stripped", d))
	for _, c := range []struct {
		method, path string
		status       int
		ctype        string
		body         string // a part of the body
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", `<script src="app.js"`},
		{"GET", "/index.html", 200, "text/html; charset=utf-8", `<link rel="stylesheet" href="style.css">`},
		{"GET", "/ops/dashboard/", 200, "text/html; charset=utf-8", "<title>resilience dashboard</title>"},
		{"GET", "/stripped/", 200, "text/html; charset=utf-8", "<title>resilience dashboard</title>"},
		{"GET", "/ops/dashboard/app.js", 200, "text/javascript; charset=utf-8", "new EventSource('events')"},
		{"GET", "/stripped/style.css", 200, "text/css; charset=utf-8", ".tile"},
		{"GET", "/ops/dashboard/snapshot.json", 200, "application/json", `{"version":2,`},
		{"HEAD", "/", 200, "text/html; charset=utf-8", ""},
		{"HEAD", "/snapshot.json", 200, "application/json", ""},
		{"HEAD", "/events", 200, "text/event-stream", ""},
		{"GET", "/favicon.ico", 404, "text/plain; charset=utf-8", "404"},
		{"GET", "/ops/dashboard/static/app.js", 200, "text/javascript; charset=utf-8", "EventSource"},
		{"POST", "/ops/dashboard/events", 405, "text/plain; charset=utf-8", "dashboard: method not allowed"},
	} {
		req := httptest.NewRequest(c.method, c.path, nil)
		if c.method == "HEAD" {
			// A HEAD is answered at once, headers only: a stream that
			// started would write its first snapshot before it saw this.
			ctx, cancel := context.WithCancel(req.Context())
			cancel()
			req = req.WithContext(ctx)
		}
		rec := httptest.NewRecorder()
		returns(t, c.method+" "+c.path+" to be answered", func() struct{} { mux.ServeHTTP(rec, req); return struct{}{} })
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != c.status || rec.Header().Get("Content-Type") != c.ctype || !strings.Contains(string(body), c.body) {
			t.Errorf("%s %s: %d %q, body %.60q...; want %d %q containing %q", c.method, c.path, rec.Code, rec.Header().Get("Content-Type"), body, c.status, c.ctype, c.body)
		}
		if c.method == "HEAD" && len(body) != 0 {
			t.Errorf("HEAD %s: a body of %d bytes, want none", c.path, len(body))
		}
		if c.status == 405 && rec.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s %s: Allow %q, want GET, HEAD", c.method, c.path, rec.Header().Get("Allow"))
		}
		if c.ctype == "text/html; charset=utf-8" && c.status == 200 && rec.Header().Get("Content-Security-Policy") != csp {
			t.Errorf("%s %s: Content-Security-Policy %q, want %q", c.method, c.path, rec.Header().Get("Content-Security-Policy"), csp)
		}
	}
}

// The page loads nothing from another origin (no CDN, no web font): the
// only absolute URL in it is the SVG namespace, which is not fetched;
// and the elements the script looks up by id are in the page.
func TestPageIsSelfContained(t *testing.T) {
	url := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|@import|url\(|@font-face`)
	for name, a := range assets {
		for _, m := range url.FindAllString(string(a.body), -1) {
			if m != "http://www.w3.org" {
				t.Errorf("%s refers to %q: the page must load nothing from elsewhere", name, m)
			}
		}
	}
	html := string(assets["index.html"].body)
	ids := regexp.MustCompile(`getElementById\('([^']+)'\)|querySelector\('#([a-z-]+)`).FindAllStringSubmatch(string(assets["app.js"].body), -1)
	if len(ids) < 5 {
		t.Fatalf("found %d element lookups in app.js, want the page's (the pattern is out of date?)", len(ids))
	}
	for _, m := range ids {
		id := m[1] + m[2]
		if !strings.Contains(html, `id="`+id+`"`) {
			t.Errorf("app.js looks up #%s, which index.html does not have", id)
		}
	}
}
