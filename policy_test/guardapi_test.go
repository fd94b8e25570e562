package policytest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// guardAPI is what a guard type's package must export for the guard to
// be a citizen of telemetry: Name and Snapshot on the type, so it can be
// registered in a telemetry.Registry and shown by every exporter, the
// dashboard and Health; and the options every guard of its package takes.
type guardAPI struct {
	pkg, typ string
	options  []string // package-level options the guard's constructor takes
}

// dir returns the directory of g's package, from the repository's root:
// policy/<pkg> for the core's policies, the path itself for a package
// named by its path (a nested module's, "resilienceredis").
func (g guardAPI) dir() string {
	if strings.HasPrefix(g.pkg, "resilience") {
		return g.pkg
	}
	return filepath.Join("policy", g.pkg)
}

// guards lists every guard type of the core and of the nested modules. A
// guard added is added here; a type that loses Name or Snapshot, or a package that loses
// one of the options, fails TestGuardAPI.
var guards = []guardAPI{
	{"breaker", "Breaker", []string{"WithName", "WithClock", "WithObserver"}},
	{"breaker", "Keyed", []string{"WithName", "WithClock", "WithObserver", "WithMaxKeys"}},
	{"bulkhead", "Bulkhead", []string{"WithName", "WithClock", "WithObserver"}},
	{"ratelimit", "Limiter", []string{"WithName", "WithClock", "WithObserver"}},
	{"ratelimit", "Keyed", []string{"WithName", "WithClock", "WithObserver", "WithMaxKeys"}},
	{"adaptive", "Limiter", []string{"WithName", "WithClock", "WithObserver"}},
	{"throttle", "Throttler", []string{"WithName", "WithClock", "WithObserver"}},
	// The chaos injector reads no time (chaos.Latency takes its clock):
	// no WithClock.
	{"chaos", "Injector", []string{"WithName", "WithObserver"}},
	// The fleet-wide guards of the nested module resilienceredis take
	// their name as an argument of their constructors and read the Redis
	// server's clock: no WithName, no WithClock.
	{"resilienceredis", "Limiter", []string{"WithObserver"}},
	{"resilienceredis", "KeyedLimiter", []string{"WithObserver"}},
	{"resilienceredis", "Breaker", []string{"WithObserver"}},
	// The fleet's retry budget is configured as retry.NewBudget is, by a
	// RetryBudgetConfig that holds its Name and Observer: no options.
	{"resilienceredis", "RetryBudget", nil},
}

// exported is the exported API of one package, read from its sources.
type exported struct {
	funcs   map[string]bool            // package-level functions
	methods map[string]map[string]bool // type name -> methods with the guard signatures
}

func readPackage(t *testing.T, dir string) exported {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	api := exported{funcs: map[string]bool{}, methods: map[string]map[string]bool{}}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() {
				continue
			}
			if fd.Recv == nil {
				api.funcs[fd.Name.Name] = true
				continue
			}
			recv := receiverType(fd.Recv.List[0].Type)
			if api.methods[recv] == nil {
				api.methods[recv] = map[string]bool{}
			}
			if sig, ok := guardSignatures[fd.Name.Name]; ok && fd.Type.Params.NumFields() == 0 && resultOf(fd.Type) == sig {
				api.methods[recv][fd.Name.Name] = true
			}
		}
	}
	return api
}

// guardSignatures are the methods of telemetry.Guard and their results.
var guardSignatures = map[string]string{"Name": "string", "Snapshot": "telemetry.Snapshot"}

// receiverType returns the name of a receiver's type: T for T, *T, T[K]
// and *T[K].
func receiverType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// resultOf returns the one result type of ft as source text ("string",
// "telemetry.Snapshot"), or "".
func resultOf(ft *ast.FuncType) string {
	if ft.Results.NumFields() != 1 {
		return ""
	}
	switch x := ft.Results.List[0].Type.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		if p, ok := x.X.(*ast.Ident); ok {
			return p.Name + "." + x.Sel.Name
		}
	}
	return ""
}

func TestGuardAPI(t *testing.T) {
	pkgs := map[string]exported{}
	for _, g := range guards {
		api, ok := pkgs[g.pkg]
		if !ok {
			api = readPackage(t, filepath.Join("..", g.dir()))
			pkgs[g.pkg] = api
		}
		for _, m := range slices.Sorted(func(yield func(string) bool) {
			for m := range guardSignatures {
				if !yield(m) {
					return
				}
			}
		}) {
			if !api.methods[g.typ][m] {
				t.Errorf("%s.%s has no method %s() %s: it cannot be registered as a telemetry.Guard", g.pkg, g.typ, m, guardSignatures[m])
			}
		}
		for _, o := range g.options {
			if !api.funcs[o] {
				t.Errorf("package %s has no option %s for its %s", g.pkg, o, g.typ)
			}
		}
	}
}

// readers are the sources that render the registered guards: the
// dashboard (its Go code and its page), resiliencehttp's Health and both
// exporters. They read each guard from what it describes, so they name no
// guard kind: no telemetry kind constant, no kind as a string.
var readers = []string{
	"../dashboard/*.go", "../dashboard/static/app.js", "../resiliencehttp/health.go",
	"../resilienceprom/*.go", "../resilienceotel/*.go",
}

// guardKinds are the kinds of the core guards, as constants and as text.
var (
	kindConsts = map[string]bool{"Breaker": true, "Bulkhead": true, "RateLimit": true}
	kindWords  = []string{"breaker", "bulkhead", "ratelimit", "limiter", "adaptive", "throttle"}
)

func TestReadersNameNoKind(t *testing.T) {
	var files []string
	for _, g := range readers {
		m, err := filepath.Glob(g)
		if err != nil || len(m) == 0 {
			t.Fatalf("no files for %s: %v", g, err)
		}
		files = append(files, m...)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".js") {
			for _, w := range kindWords {
				for _, q := range []string{"'", `"`, "."} {
					lit := q + w
					if q != "." {
						lit += q
					}
					if strings.Contains(string(src), lit) {
						t.Errorf("%s names the kind %s (%s)", f, w, lit)
					}
				}
			}
			continue
		}
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution) // comments left out
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if p, ok := x.X.(*ast.Ident); ok && (p.Name == "telemetry" && kindConsts[x.Sel.Name] ||
					(p.Name == "adaptive" || p.Name == "throttle") && x.Sel.Name == "Kind") {
					t.Errorf("%s: %s.%s names a guard kind", fset.Position(x.Pos()), p.Name, x.Sel.Name)
				}
			case *ast.BasicLit:
				if x.Kind == token.STRING && slices.Contains(kindWords, strings.Trim(x.Value, "`\"")) {
					t.Errorf("%s: the literal %s names a guard kind", fset.Position(x.Pos()), x.Value)
				}
			}
			return true
		})
	}
}
