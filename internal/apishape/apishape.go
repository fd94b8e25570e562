// Package apishape checks that a module's exported API has the one shape
// all of the repository's packages share, from its source (go/ast, no
// build): each module's test calls [Check] with the guards it exports and
// the exemptions it has, each with its reason. The rules:
//
//  1. A guard type has Name() string and Snapshot() telemetry.Snapshot;
//     a type that has a Snapshot() telemetry.Snapshot method is a guard
//     and must be listed as one (so a new guard is checked too).
//  2. A guard's package has WithName, WithClock and WithObserver options,
//     unless exempted (the fleet guards take their name positionally and
//     read Redis's clock, say).
//  3. A lifetime refusal counter is called Refused: no exported field of
//     an exported struct is called Rejected, Refusals, Shed, Denied and
//     the like, and a guard package's Stats has a Refused field unless
//     exempted (a cache refuses nothing).
//  4. An option sets one field: no func literal of an exported With...
//     function that takes one pointer (the *Config the option applies to)
//     assigns to two fields of it, unless exempted because the two values
//     are one concept. WithConfig, which merges a whole Config, is exempt
//     by rule.
//  5. Every exported type named ...Option is a sealed interface: an
//     interface type (not an alias, not a func type) whose methods are
//     all unexported, so that only its package makes one.
//  6. A guard's policy adapter is named Policy for the package's primary
//     guard and <Guard>Policy for the others (breaker.KeyedPolicy,
//     resilienceredis.LimiterPolicy): an exported func named ...Policy in
//     a guard package is Policy or <G>Policy for a guard type G of the
//     package, unless exempted (a variant such as ratelimit.WaitPolicy).
//  7. A required value is positional, an optional one is an option: this
//     rule is stated in each constructor's doc and is not checked here.
package apishape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Rules are what one module's test knows about its API.
type Rules struct {
	// Dir is the module's root directory (the one with its go.mod).
	Dir string

	// Guards maps a package directory, relative to Dir with slashes ("."
	// for the root, "policy/breaker"), to its guard types.
	Guards map[string][]string

	// Exempt maps an exemption to its reason, which must not be empty.
	// The keys are "dir.WithClock" (and WithName, WithObserver) for rule
	// 2, "dir.Stats.Refused" for rule 3, "dir.WithX" for rule 4 and
	// "dir.XPolicy" for rule 6; for the module's root package, without
	// "dir." ("WithClock").
	Exempt map[string]string
}

// Check returns the problems of the module's API, one line each, sorted;
// none if it has the shape. An exemption that exempts nothing is a
// problem too, so that they do not outlive their reason.
func Check(r Rules) ([]string, error) {
	pkgs, err := parse(r.Dir)
	if err != nil {
		return nil, err
	}
	c := &checker{rules: r, used: map[string]bool{}}
	for reason, why := range r.Exempt {
		if strings.TrimSpace(why) == "" {
			c.problem("exemption %s has no reason", reason)
		}
	}
	for dir := range r.Guards {
		if pkgs[dir] == nil {
			c.problem("%s: listed in Guards, but no such package", dir)
		}
	}
	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		c.pkg(d, pkgs[d])
	}
	for key := range r.Exempt {
		if !c.used[key] {
			c.problem("exemption %s exempts nothing: remove it", key)
		}
	}
	sort.Strings(c.problems)
	return c.problems, nil
}

type checker struct {
	rules    Rules
	used     map[string]bool
	problems []string
}

func (c *checker) problem(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// exempt reports whether key is exempted, and marks the exemption used.
func (c *checker) exempt(key string) bool {
	if _, ok := c.rules.Exempt[key]; ok {
		c.used[key] = true
		return true
	}
	return false
}

// pkg is the exported declarations of one package.
type pkg struct {
	types   map[string]*ast.TypeSpec
	methods map[string]map[string]*ast.FuncDecl // receiver type → name → decl
	funcs   map[string]*ast.FuncDecl
}

// refusalName matches the names a lifetime refusal counter must not have.
var refusalName = regexp.MustCompile(`^(?i:rejected|rejections|rejects|refusals|refusedcalls|shed|denied|dropped|limited|throttled)$`)

// key is the name of an exemption of name in the package dir.
func key(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "." + name
}

func (c *checker) pkg(dir string, p *pkg) {
	guards := c.rules.Guards[dir]
	isGuard := map[string]bool{}
	for _, g := range guards {
		isGuard[g] = true
	}
	// Rule 1.
	for _, g := range guards {
		if p.types[g] == nil {
			c.problem("%s.%s: listed as a guard, but no such type", dir, g)
			continue
		}
		if !hasMethod(p.methods[g]["Name"], "string") {
			c.problem("%s.%s: a guard needs a method Name() string", dir, g)
		}
		if !hasMethod(p.methods[g]["Snapshot"], "telemetry.Snapshot") {
			c.problem("%s.%s: a guard needs a method Snapshot() telemetry.Snapshot", dir, g)
		}
	}
	for t, ms := range p.methods {
		if hasMethod(ms["Snapshot"], "telemetry.Snapshot") && !isGuard[t] {
			c.problem("%s.%s: has Snapshot() telemetry.Snapshot but is not listed as a guard", dir, t)
		}
	}
	// Rule 2.
	if len(guards) > 0 {
		for _, o := range []string{"WithName", "WithClock", "WithObserver"} {
			if p.funcs[o] == nil && !c.exempt(key(dir, o)) {
				c.problem("%s: a guard's package needs the option %s", dir, o)
			}
		}
	}
	// Rule 3.
	for name, ts := range p.types {
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		for _, f := range st.Fields.List {
			for _, n := range f.Names {
				if n.IsExported() && refusalName.MatchString(n.Name) {
					c.problem("%s.%s.%s: a lifetime refusal counter is called Refused", dir, name, n.Name)
				}
			}
		}
	}
	if st, ok := p.types["Stats"]; ok && len(guards) > 0 {
		if !hasField(st, "Refused") && !c.exempt(key(dir, "Stats.Refused")) {
			c.problem("%s.Stats: a guard's Stats counts its refusals in a field Refused", dir)
		}
	}
	// Rule 4.
	for name, fd := range p.funcs {
		if !strings.HasPrefix(name, "With") || name == "WithConfig" || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			lit, ok := n.(*ast.FuncLit)
			if !ok {
				return true
			}
			fields := assignedFields(lit)
			if len(fields) > 1 && !c.exempt(key(dir, name)) {
				c.problem("%s.%s: an option sets one field, this one sets %s", dir, name, strings.Join(fields, ", "))
			}
			return true
		})
	}
	// Rule 5.
	for name, ts := range p.types {
		if !strings.HasSuffix(name, "Option") {
			continue
		}
		it, ok := ts.Type.(*ast.InterfaceType)
		if ts.Assign.IsValid() || !ok || !sealed(it, p) {
			c.problem("%s.%s: an Option is a sealed interface (interface{ apply(*config) }), not %s", dir, name, describe(ts))
		}
	}
	// Rule 6.
	if len(guards) > 0 {
		for name := range p.funcs {
			if !strings.HasSuffix(name, "Policy") || name == "Policy" {
				continue
			}
			if isGuard[strings.TrimSuffix(name, "Policy")] || c.exempt(key(dir, name)) {
				continue
			}
			c.problem("%s.%s: a guard's policy adapter is Policy (the primary guard's) or <Guard>Policy for a guard type of the package", dir, name)
		}
	}
}

// hasMethod reports whether fd is a method without parameters whose one
// result is of the type spelled result.
func hasMethod(fd *ast.FuncDecl, result string) bool {
	if fd == nil || fd.Type.Params.NumFields() != 0 || fd.Type.Results.NumFields() != 1 {
		return false
	}
	return spell(fd.Type.Results.List[0].Type) == result
}

func hasField(ts *ast.TypeSpec, name string) bool {
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return false
	}
	for _, f := range st.Fields.List {
		for _, n := range f.Names {
			if n.Name == name {
				return true
			}
		}
	}
	return false
}

// spell spells a type expression as source does, for the simple types
// the rules compare.
func spell(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return spell(e.X) + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + spell(e.X)
	}
	return fmt.Sprintf("%T", e)
}

func describe(ts *ast.TypeSpec) string {
	s := "a " + strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", ts.Type), "*ast."), "Type")) + " type"
	if ts.Assign.IsValid() {
		s = "an alias of " + s
	}
	if _, ok := ts.Type.(*ast.InterfaceType); ok && !ts.Assign.IsValid() {
		s = "an interface with an exported method, or one embedded from elsewhere"
	}
	return s
}

// sealed reports whether it has methods and all are unexported, or are
// those of sealed interfaces of p that it embeds.
func sealed(it *ast.InterfaceType, p *pkg) bool {
	if it.Methods.NumFields() == 0 {
		return false
	}
	for _, m := range it.Methods.List {
		if len(m.Names) == 0 { // embedded
			id, ok := m.Type.(*ast.Ident)
			if !ok || p.types[id.Name] == nil || p.types[id.Name].Assign.IsValid() {
				return false
			}
			emb, ok := p.types[id.Name].Type.(*ast.InterfaceType)
			if !ok || emb == it || !sealed(emb, p) {
				return false
			}
		}
		for _, n := range m.Names {
			if n.IsExported() {
				return false
			}
		}
	}
	return true
}

// assignedFields returns the fields of its one pointer parameter that lit
// assigns to, sorted: c.X = ..., c.X, c.Y = ..., c.X++, c.X.y = ....
func assignedFields(lit *ast.FuncLit) []string {
	params := lit.Type.Params.List
	if len(params) != 1 || len(params[0].Names) != 1 {
		return nil
	}
	if _, ok := params[0].Type.(*ast.StarExpr); !ok {
		return nil
	}
	param := params[0].Names[0].Name
	set := map[string]bool{}
	field := func(e ast.Expr) {
		// Walk down to the selector whose X is the parameter.
		for {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == param {
				set[sel.Sel.Name] = true
				return
			}
			e = sel.X
		}
	}
	ast.Inspect(lit.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return n == lit
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				field(l)
			}
		case *ast.IncDecStmt:
			field(n.X)
		}
		return true
	})
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// parse reads the exported declarations of the module's packages under
// dir: not its test files, nor internal, testdata, examples or hidden
// directories, nor nested modules.
func parse(dir string) (map[string]*pkg, error) {
	fset := token.NewFileSet()
	pkgs := map[string]*pkg{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != dir {
				if name == "internal" || name == "testdata" || name == "examples" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		p := pkgs[rel]
		if p == nil {
			p = &pkg{types: map[string]*ast.TypeSpec{}, methods: map[string]map[string]*ast.FuncDecl{}, funcs: map[string]*ast.FuncDecl{}}
			pkgs[rel] = p
		}
		for _, decl := range f.Decls {
			switch decl := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range decl.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok && ts.Name.IsExported() {
						p.types[ts.Name.Name] = ts
					}
				}
			case *ast.FuncDecl:
				if !decl.Name.IsExported() {
					continue
				}
				if decl.Recv == nil {
					p.funcs[decl.Name.Name] = decl
					continue
				}
				recv := receiver(decl.Recv.List[0].Type)
				if p.methods[recv] == nil {
					p.methods[recv] = map[string]*ast.FuncDecl{}
				}
				p.methods[recv][decl.Name.Name] = decl
			}
		}
		return nil
	})
	return pkgs, err
}

// receiver returns the type name of a receiver: T, *T, T[K], *T[K].
func receiver(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiver(e.X)
	case *ast.IndexExpr:
		return receiver(e.X)
	case *ast.IndexListExpr:
		return receiver(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}
