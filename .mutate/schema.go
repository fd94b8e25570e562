package main

// Mutant schemata: every mutant of a package compiled into one test binary,
// each behind a run-time check of its number (the environment variable
// MUTATE_ID), so that a package costs one compile instead of one a mutant.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
)

// Names the schema adds to the package; no package of the repository uses them.
const (
	onFunc    = "mutateSchemaOn"
	activeVar = "mutateSchemaActive"
	envID     = "MUTATE_ID"
	// helperName is the file the overlay adds to the package.
	helperName = "zz_mutate_schema.go"
	// maxGuard bounds one guarded expression: nested mutants copy their
	// operands, so deep nests grow fast; past this the outer mutant is
	// left to the one-compile-per-mutant path.
	maxGuard = 1 << 16
)

// pkgTypes type-checks the package's non-test files, original or mutated.
type pkgTypes struct {
	path  string // import path
	name  string // package name
	dir   string
	files []string // absolute paths of the non-test Go files of the build
	fset  *token.FileSet
	imp   types.Importer
	src   map[string][]byte
	asts  map[string]*ast.File
}

// loadTypes lists the package with "go list -export -deps" and sets up
// go/types on the export data of its dependencies.
func loadTypes(modRoot, pkgArg string) (*pkgTypes, error) {
	cmd := exec.Command("go", "list", "-deps", "-export",
		"-json=ImportPath,Name,Dir,GoFiles,CgoFiles,Export,DepOnly", pkgArg, "os", "strconv")
	cmd.Dir = modRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %v\n%s", err, stderr.Bytes())
	}
	type listed struct {
		ImportPath, Name, Dir, Export string
		GoFiles, CgoFiles             []string
		DepOnly                       bool
	}
	exports := map[string]string{}
	var target *listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listed
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		exports[p.ImportPath] = p.Export
		if !p.DepOnly && p.ImportPath != "os" && p.ImportPath != "strconv" { // the helper's imports
			target = &p
		}
	}
	if target == nil {
		return nil, errors.New("go list: no package")
	}
	if len(target.CgoFiles) > 0 {
		return nil, errors.New("the package uses cgo")
	}
	pt := &pkgTypes{path: target.ImportPath, name: target.Name, dir: target.Dir,
		fset: token.NewFileSet(), src: map[string][]byte{}, asts: map[string]*ast.File{}}
	pt.imp = importer.ForCompiler(pt.fset, "gc", func(path string) (io.ReadCloser, error) {
		f := exports[path]
		if f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	for _, name := range target.GoFiles {
		path := filepath.Join(target.Dir, name)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(pt.fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		pt.files = append(pt.files, path)
		pt.src[path] = src
		pt.asts[path] = f
	}
	return pt, nil
}

// check type-checks the package with some files' text replaced (path ->
// source) and extra files added; it returns the type information and the
// first error.
// With withVet, a clean type check also runs the vet checks go test runs
// that a mutant can trip.
func (pt *pkgTypes) check(withVet bool, replace map[string][]byte, extra ...[]byte) (*types.Info, error) {
	files := make([]*ast.File, 0, len(pt.files)+len(extra))
	for _, path := range pt.files {
		f := pt.asts[path]
		if src, ok := replace[path]; ok {
			var err error
			if f, err = parser.ParseFile(pt.fset, path, src, parser.SkipObjectResolution); err != nil {
				return nil, err
			}
		}
		files = append(files, f)
	}
	for i, src := range extra {
		f, err := parser.ParseFile(pt.fset, fmt.Sprintf("extra%d.go", i), src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	info := newInfo()
	conf := types.Config{Importer: pt.imp, Sizes: types.SizesFor("gc", runtime.GOARCH)}
	pkg, err := conf.Check(pt.path, pt.fset, files, info)
	if err == nil && withVet {
		if d := vet(pt, files, pkg, info); d != "" {
			err = errors.New("vet: " + d)
		}
	}
	return info, err
}

func newInfo() *types.Info {
	return &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Implicits:    map[ast.Node]types.Object{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		Scopes:       map[ast.Node]*types.Scope{},
		Instances:    map[*ast.Ident]types.Instance{},
		FileVersions: map[*ast.File]string{},
	}
}

// helperSrc is the file added to the package: the active mutant's number
// from the environment (none: -1) and the guard every mutant uses.
func helperSrc(pkgName string) []byte {
	return []byte(`// Code generated by the mutation harness. DO NOT EDIT.

package ` + pkgName + `

import (
	"os"
	"strconv"
)

var ` + activeVar + ` = func() int {
	n, err := strconv.Atoi(os.Getenv("` + envID + `"))
	if err != nil {
		return -1
	}
	return n
}()

func ` + onFunc + `(id int) bool { return ` + activeVar + ` == id }
`)
}

type siteKind int

const (
	siteBool   siteKind = iota // boolean expression: (on && M) || (!on && O)
	siteVal                    // other expression: func() T { if on { return M }; return O }()
	siteStmt                   // statement: if on { M } else { O }
	siteRemove                 // removed statement: if !on { O }
	siteAssign                 // x++ or x += e outside a statement list: x = func() T { ... }()
)

// A site is one syntax node carrying one or more mutants; sites nest.
type site struct {
	start, end int // byte range of the node
	rank       int // among sites of one range, the inner has the lower rank
	kind       siteKind
	typ        string // siteVal: the expression's type, as written in the file
	ms         []int  // the mutants (their numbers)
	kids       []*site
	// siteAssign: the variable, the operator and the right-hand side
	// (rhs[0] < 0: the constant 1 of ++ and --).
	x   string
	op  byte
	rhs [2]int
}

// schemaFile is one mutated file ready for rendering.
type schemaFile struct {
	path  string
	src   []byte
	sites []*site // every site, outer first for equal ranges
	byID  map[int]*mutant
}

// planSchema classifies the mutants of one file: those that get a site, and
// those left to the per-mutant path (with the reason).
func (pt *pkgTypes) planSchema(path string, ms []mutant, ids []int, info *types.Info) (*schemaFile, map[int]string) {
	src := pt.src[path]
	f := pt.asts[path]
	tf := pt.fset.File(f.Pos())
	off := func(p token.Pos) int { return tf.Offset(p) }
	left := map[int]string{}
	sf := &schemaFile{path: path, src: src, byID: map[int]*mutant{}}

	// Index the nodes mutants hang on, and every node's parent.
	parent := map[ast.Node]ast.Node{}
	inList := map[ast.Stmt]bool{}
	binAt := map[int]ast.Expr{}  // operator offset -> binary or unary expression
	condAt := map[int]ast.Expr{} // if condition's start
	stmtTok := map[int]ast.Stmt{}
	stmtAt := map[int]ast.Stmt{}
	litAt := map[int]ast.Expr{}
	var stack []ast.Node
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		if len(stack) > 0 {
			parent[n] = stack[len(stack)-1]
		}
		stack = append(stack, n)
		switch n := n.(type) {
		case *ast.BlockStmt:
			for _, s := range n.List {
				inList[s] = true
			}
		case *ast.CaseClause:
			for _, s := range n.Body {
				inList[s] = true
			}
		case *ast.CommClause:
			for _, s := range n.Body {
				inList[s] = true
			}
		case *ast.BinaryExpr:
			binAt[off(n.OpPos)] = n
		case *ast.UnaryExpr:
			binAt[off(n.OpPos)] = n
		case *ast.IfStmt:
			condAt[off(n.Cond.Pos())] = n.Cond
		case *ast.AssignStmt:
			stmtTok[off(n.TokPos)] = n
			stmtAt[off(n.Pos())] = n
		case *ast.IncDecStmt:
			stmtTok[off(n.TokPos)] = n
			stmtAt[off(n.Pos())] = n
		case *ast.ExprStmt:
			stmtAt[off(n.Pos())] = n
		case *ast.BasicLit:
			litAt[off(n.Pos())] = n
		case *ast.Ident:
			litAt[off(n.Pos())] = n
		}
		return true
	})
	qual := func(p *types.Package) string {
		if p.Path() == pt.path {
			return ""
		}
		for _, im := range f.Imports {
			if strings.Trim(im.Path.Value, "\"`") != p.Path() {
				continue
			}
			if im.Name == nil {
				return p.Name()
			}
			if im.Name.Name != "_" && im.Name.Name != "." {
				return im.Name.Name
			}
		}
		panic(errNoImport)
	}
	// constContext reports whether an expression must stay constant.
	var constContext func(e ast.Expr) bool
	constContext = func(e ast.Expr) bool {
		if p, ok := parent[e].(ast.Expr); ok {
			if tv, ok := info.Types[p]; ok && tv.Value != nil {
				// Part of a larger constant expression, but for the
				// integer in -1: -T(n) is the constant -n of type T.
				if u, ok := p.(*ast.UnaryExpr); ok && u.Op == token.SUB && isInteger(tv.Type) {
					return constContext(u)
				}
				return true
			}
		}
		var child ast.Node = e
		for n := parent[e]; n != nil; child, n = n, parent[n] {
			switch n := n.(type) {
			case *ast.GenDecl:
				if n.Tok == token.CONST {
					return true
				}
			case *ast.ArrayType:
				if child == n.Len {
					return true
				}
			case *ast.KeyValueExpr:
				if child == n.Key {
					if cl, ok := parent[n].(*ast.CompositeLit); ok {
						if tv, ok := info.Types[cl]; ok && tv.Type != nil {
							switch tv.Type.Underlying().(type) {
							case *types.Array, *types.Slice:
								return true
							}
						}
					}
				}
			case *ast.FuncDecl, *ast.FuncLit:
				return false
			}
		}
		return false
	}
	exprSite := func(e ast.Expr, rank int) (*site, string) {
		tv, ok := info.Types[e]
		if !ok || tv.Type == nil {
			return nil, "no type"
		}
		if tv.Value != nil && constContext(e) {
			return nil, "constant context"
		}
		if u, ok := parent[e].(*ast.UnaryExpr); ok && u.Op == token.SUB {
			// go/types leaves the operand of a constant -n untyped.
			if ptv := info.Types[u]; ptv.Value != nil && isInteger(ptv.Type) {
				tv.Type = ptv.Type
			}
		}
		s := &site{start: off(e.Pos()), end: off(e.End()), rank: rank}
		if b, ok := tv.Type.(*types.Basic); ok && (b.Kind() == types.Bool || b.Kind() == types.UntypedBool) {
			s.kind = siteBool
			return s, ""
		}
		if b, ok := tv.Type.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
			return nil, "untyped"
		}
		var typ string
		if err := func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("%v", r)
				}
			}()
			typ = types.TypeString(tv.Type, qual)
			return nil
		}(); err != nil {
			return nil, "type not nameable in the file"
		}
		s.kind, s.typ = siteVal, typ
		return s, ""
	}
	sites := map[[3]int]*site{}
	for i, m := range ms {
		id := ids[i]
		sf.byID[id] = &ms[i]
		var s *site
		why := ""
		switch {
		case m.repl == wrapNot:
			if e := condAt[m.start]; e != nil {
				s, why = exprSite(e, 1)
			}
		case m.op == "remove":
			if st := stmtAt[m.start]; st != nil && inList[st] {
				s = &site{start: off(st.Pos()), end: off(st.End()), rank: 3, kind: siteRemove}
			}
		case m.op == "incdec", m.op == "arith" && strings.Contains(m.desc, "="):
			if st := stmtTok[m.start]; st != nil {
				if inList[st] {
					s = &site{start: off(st.Pos()), end: off(st.End()), rank: 2, kind: siteStmt}
				} else {
					s, why = assignSite(st, info, qual, off)
				}
			}
		case m.op == "const":
			if e := litAt[m.start]; e != nil {
				s, why = exprSite(e, 0)
			}
		default: // binary and unary operators
			if e := binAt[m.start]; e != nil {
				s, why = exprSite(e, 0)
			}
		}
		if s == nil {
			if why == "" {
				why = "no syntax node"
			}
			left[id] = why
			continue
		}
		k := [3]int{s.start, s.end, s.rank}
		if old, ok := sites[k]; ok {
			s = old
		} else {
			sites[k] = s
		}
		s.ms = append(s.ms, id)
	}
	for _, s := range sites {
		sf.sites = append(sf.sites, s)
	}
	sort.Slice(sf.sites, func(i, j int) bool {
		a, b := sf.sites[i], sf.sites[j]
		if a.start != b.start {
			return a.start < b.start
		}
		if a.end != b.end {
			return a.end > b.end
		}
		return a.rank > b.rank
	})
	return sf, left
}

// assignSite is the site of a "x++" or "x += e" that cannot become an if
// statement (a for loop's post statement): x = func() T { ... }(), for a
// variable x only (it is read twice).
func assignSite(st ast.Stmt, info *types.Info, qual types.Qualifier, off func(token.Pos) int) (*site, string) {
	s := &site{start: off(st.Pos()), end: off(st.End()), rank: 2, kind: siteAssign, rhs: [2]int{-1, -1}}
	var x ast.Expr
	switch st := st.(type) {
	case *ast.IncDecStmt:
		x, s.op = st.X, '+'
		if st.Tok == token.DEC {
			s.op = '-'
		}
	case *ast.AssignStmt:
		if len(st.Lhs) != 1 || len(st.Rhs) != 1 {
			return nil, "statement outside a statement list"
		}
		x, s.op = st.Lhs[0], '+'
		if st.Tok == token.SUB_ASSIGN {
			s.op = '-'
		}
		s.rhs = [2]int{off(st.Rhs[0].Pos()), off(st.Rhs[0].End())}
	}
	id, ok := x.(*ast.Ident)
	if !ok || id.Name == "_" {
		return nil, "statement outside a statement list, not on a variable"
	}
	tv, ok := info.Types[id]
	if !ok || tv.Type == nil {
		return nil, "no type"
	}
	ok = true
	func() {
		defer func() {
			if recover() != nil {
				ok = false
			}
		}()
		s.typ = types.TypeString(tv.Type, qual)
	}()
	if !ok {
		return nil, "type not nameable in the file"
	}
	s.x = id.Name
	return s, ""
}

// isInteger reports whether t is a typed integer type (not a float: -0.0
// is not the constant -0).
func isInteger(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsInteger != 0 && b.Info()&types.IsUntyped == 0
}

var errNoImport = errors.New("type's package not imported by the file")

// render returns the file with the sites of the mutants in keep guarded.
// Mutants whose guarded text would pass maxGuard are added to tooBig.
func (sf *schemaFile) render(keep map[int]bool, tooBig map[int]bool) []byte {
	// Build the nesting of the kept sites.
	var roots []*site
	var stack []*site
	for _, s0 := range sf.sites {
		var ids []int
		for _, id := range s0.ms {
			if keep[id] {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			continue
		}
		cp := *s0
		s := &cp
		s.ms, s.kids = ids, nil
		for len(stack) > 0 && stack[len(stack)-1].end <= s.start {
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			top := stack[len(stack)-1]
			top.kids = append(top.kids, s)
		} else {
			roots = append(roots, s)
		}
		stack = append(stack, s)
	}
	root := &site{start: 0, end: len(sf.src), kids: roots}
	return []byte(sf.body(root, nil, tooBig))
}

// body renders the site's text with one of its mutants applied (or none)
// and its inner sites guarded.
func (sf *schemaFile) body(s *site, alt *mutant, tooBig map[int]bool) string {
	if alt != nil {
		if alt.repl == wrapNot {
			return "!(" + sf.body(s, nil, tooBig) + ")"
		}
		if alt.start == s.start && alt.end == s.end {
			return alt.repl // a replaced literal or a removed statement
		}
	}
	var b strings.Builder
	pos := s.start
	for _, k := range s.kids {
		if alt != nil && alt.start >= pos && alt.end <= k.start {
			b.Write(sf.src[pos:alt.start])
			b.WriteString(alt.repl)
			pos = alt.end
		}
		b.Write(sf.src[pos:k.start])
		b.WriteString(sf.guard(k, tooBig))
		pos = k.end
	}
	if alt != nil && alt.start >= pos && alt.end <= s.end {
		b.Write(sf.src[pos:alt.start])
		b.WriteString(alt.repl)
		pos = alt.end
	}
	b.Write(sf.src[pos:s.end])
	return b.String()
}

// guard renders a site with every one of its mutants behind its guard.
func (sf *schemaFile) guard(s *site, tooBig map[int]bool) string {
	orig := sf.body(s, nil, tooBig)
	on := func(id int) string { return onFunc + "(" + itoa(id) + ")" }
	var b strings.Builder
	switch s.kind {
	case siteBool:
		b.WriteString("(")
		var none []string
		for _, id := range s.ms {
			b.WriteString("(" + on(id) + " && (" + sf.body(s, sf.byID[id], tooBig) + ")) || ")
			none = append(none, "!"+on(id))
		}
		b.WriteString("(" + strings.Join(none, " && ") + " && (" + orig + ")))")
	case siteVal:
		b.WriteString("func() " + s.typ + " { ")
		for _, id := range s.ms {
			b.WriteString("if " + on(id) + " { return " + sf.body(s, sf.byID[id], tooBig) + " }; ")
		}
		b.WriteString("return " + orig + " }()")
	case siteStmt:
		for _, id := range s.ms {
			b.WriteString("if " + on(id) + " { " + sf.body(s, sf.byID[id], tooBig) + " } else ")
		}
		b.WriteString("{ " + orig + " }")
	case siteRemove:
		var none []string
		for _, id := range s.ms {
			none = append(none, "!"+on(id))
		}
		b.WriteString("if " + strings.Join(none, " && ") + " { " + orig + " }")
	case siteAssign:
		e := "1"
		if s.rhs[0] >= 0 {
			e = sf.body(&site{start: s.rhs[0], end: s.rhs[1], kids: s.kids}, nil, tooBig)
		}
		b.WriteString(s.x + " = func() " + s.typ + " { ")
		for _, id := range s.ms {
			b.WriteString("if " + on(id) + " { return " + s.x + " " + sf.byID[id].repl[:1] + " (" + e + ") }; ")
		}
		b.WriteString("return " + s.x + " " + string(s.op) + " (" + e + ") }()")
	}
	if b.Len() > maxGuard {
		for _, id := range s.ms {
			tooBig[id] = true
		}
		return orig
	}
	return b.String()
}

// schema is the result of building a package's schemata.
type schema struct {
	files  map[string][]byte // mutated file path -> schema source
	helper []byte
	in     map[int]bool   // mutants compiled in
	left   map[int]string // mutants left to the per-mutant path, with the reason
}

// buildSchema plans and renders the schemata of the mutants (ids are their
// numbers) and checks them with go/types: a mutant that does not compile
// on its own, or whose guard breaks the schema, is left out.
func buildSchema(pt *pkgTypes, ms []mutant, ids []int) (*schema, error) {
	info, err := pt.check(true, nil)
	if err != nil {
		return nil, fmt.Errorf("go/types: %v", err)
	}
	sc := &schema{files: map[string][]byte{}, helper: helperSrc(pt.name), in: map[int]bool{}, left: map[int]string{}}
	if obj := usesHelperNames(pt); obj != "" {
		return nil, fmt.Errorf("the package declares %s", obj)
	}
	byFile := map[string][]int{}
	for i, m := range ms {
		byFile[m.file] = append(byFile[m.file], i)
	}
	var sfs []*schemaFile
	for path, idx := range byFile {
		if _, ok := pt.src[path]; !ok {
			for _, i := range idx {
				sc.left[ids[i]] = "file not in the build"
			}
			continue
		}
		fms := make([]mutant, len(idx))
		fids := make([]int, len(idx))
		for j, i := range idx {
			fms[j], fids[j] = ms[i], ids[i]
		}
		sf, left := pt.planSchema(path, fms, fids, info)
		for id, why := range left {
			sc.left[id] = why
		}
		// A mutant that does not compile on its own is left to the
		// per-mutant path, which judges it not viable as before.
		for j, m := range fms {
			if _, ok := left[fids[j]]; ok {
				continue
			}
			if _, err := pt.check(true, map[string][]byte{path: m.apply(pt.src[path])}); err != nil {
				sc.left[fids[j]] = "does not compile or vet alone"
				continue
			}
			sc.in[fids[j]] = true
		}
		sfs = append(sfs, sf)
	}
	renderAll := func(keep map[int]bool) (map[string][]byte, map[int]bool) {
		out := map[string][]byte{}
		big := map[int]bool{}
		for _, sf := range sfs {
			out[sf.path] = sf.render(keep, big)
		}
		return out, big
	}
	ok := func(set []int) bool {
		keep := map[int]bool{}
		for _, id := range set {
			keep[id] = true
		}
		files, _ := renderAll(keep)
		_, err := pt.check(false, files, sc.helper)
		return err == nil
	}
	var bisect func(set []int) []int
	bisect = func(set []int) []int {
		if len(set) == 0 || ok(set) {
			return nil
		}
		if len(set) == 1 {
			return set
		}
		h := len(set) / 2
		return append(bisect(set[:h]), bisect(set[h:])...)
	}
	for round := 0; ; round++ {
		files, big := renderAll(sc.in)
		for id := range big {
			delete(sc.in, id)
			sc.left[id] = "guard too large"
		}
		if len(big) > 0 {
			files, _ = renderAll(sc.in)
		}
		_, err := pt.check(false, files, sc.helper)
		if err == nil {
			sc.files = files
			return sc, nil
		}
		if round == 3 {
			return nil, fmt.Errorf("schema does not type-check: %v", err)
		}
		var set []int
		for id := range sc.in {
			set = append(set, id)
		}
		sort.Ints(set)
		bad := bisect(set)
		if len(bad) == 0 {
			return nil, fmt.Errorf("schema does not type-check, no mutant to blame: %v", err)
		}
		for _, id := range bad {
			delete(sc.in, id)
			sc.left[id] = "guard does not compile"
		}
	}
}

// usesHelperNames returns the helper's name the package already uses, if any.
func usesHelperNames(pt *pkgTypes) string {
	for _, f := range pt.asts {
		for _, d := range f.Decls {
			found := ""
			ast.Inspect(d, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && (id.Name == onFunc || id.Name == activeVar) {
					found = id.Name
				}
				return found == ""
			})
			if found != "" {
				return found
			}
		}
	}
	return ""
}
