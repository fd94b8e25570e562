package resilience_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// guardKinds are the kinds of the built-in guards, as their snapshots and
// events name them.
var guardKinds = []string{"breaker", "bulkhead", "ratelimit", "adaptive", "throttle", "chaos", "cache"}

// guardPackages are the packages that define guards.
var guardPackages = []string{
	"github.com/f0b5b96b/resilience/policy/breaker",
	"github.com/f0b5b96b/resilience/policy/bulkhead",
	"github.com/f0b5b96b/resilience/policy/ratelimit",
	"github.com/f0b5b96b/resilience/policy/adaptive",
	"github.com/f0b5b96b/resilience/policy/throttle",
	"github.com/f0b5b96b/resilience/policy/chaos",
	"github.com/f0b5b96b/resilience/policy/cache",
	"github.com/f0b5b96b/resilience/resilienceredis",
}

// TestConsumersNameNoGuardKind reads the code (not the tests) of the
// exporters, the dashboard and the health check, which render every guard
// from its telemetry.Snapshot: none of it may name a guard's kind, in an
// import of a guard's package (whose Kind and Event constants,
// breaker.Kind, breaker.EventFailure, ..., name the kind), or a
// string ("breaker", "breaker.failure", "ratelimit_tokens"). So a guard of
// one's own shows as the built-in ones do. resilienceotel's trace.go is
// left out: its TraceBreaker option takes a *breaker.Breaker, by design,
// to put that breaker's state on a span.
func TestConsumersNameNoGuardKind(t *testing.T) {
	var files []string
	for _, pattern := range []string{"resilienceprom/*.go", "resilienceotel/*.go", "dashboard/*.go", "resiliencehttp/health*.go"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, "_test.go") && f != filepath.Join("resilienceotel", "trace.go") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 10 {
		t.Fatalf("found %d files, want the exporters', the dashboard's and health.go: %v", len(files), files)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, msg := range kindNames(f) {
			t.Errorf("%s: %s", fset.Position(msg.pos), msg.text)
		}
	}
}

type finding struct {
	pos  token.Pos
	text string
}

// kindNames returns where f names a guard kind.
func kindNames(f *ast.File) []finding {
	var out []finding
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		for _, g := range guardPackages {
			if path == g {
				out = append(out, finding{imp.Pos(), "imports guard package " + path})
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			if n.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(n.Value)
			if err != nil {
				return true
			}
			for _, k := range guardKinds {
				if s == k || strings.HasPrefix(s, k+".") || strings.HasPrefix(s, k+"_") {
					out = append(out, finding{n.Pos(), "names the guard kind " + k + " in " + strconv.Quote(s)})
				}
			}
		}
		return true
	})
	return out
}

// kindNames finds each way of naming a kind that it looks for.
func TestKindNamesFindsKinds(t *testing.T) {
	src := `package p
import (
	"github.com/f0b5b96b/resilience/policy/breaker"
	tm "github.com/f0b5b96b/resilience/telemetry"
)
var c = "ratelimit"
var d = "throttle.refused"
var e = "cache_hits"
var ok1, ok2 = tm.StateOpen, "pipeline"
var _ = breaker.ErrOpen
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(kindNames(f)); got != 4 {
		t.Errorf("kindNames found %d, want 4 (the import, three strings): %v", got, kindNames(f))
	}
}
