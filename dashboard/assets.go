package dashboard

import (
	"embed"
	"net/http"
)

//go:embed static
var static embed.FS

// assets are the page's files, read once: name → content type and bytes.
var assets = func() map[string]asset {
	m := make(map[string]asset)
	for name, ctype := range map[string]string{
		"index.html": "text/html; charset=utf-8",
		"app.js":     "text/javascript; charset=utf-8",
		"style.css":  "text/css; charset=utf-8",
	} {
		b, err := static.ReadFile("static/" + name)
		if err != nil {
			panic("dashboard: embedded " + name + " is missing: " + err.Error())
		}
		m[name] = asset{ctype, b}
	}
	return m
}()

type asset struct {
	ctype string
	body  []byte
}

// csp keeps the page to its own files: no inline script, no other origin.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

func serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	if name == "" {
		name = "index.html"
	}
	a := assets[name]
	h := w.Header()
	h.Set("Content-Type", a.ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", csp)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(a.body)
}
