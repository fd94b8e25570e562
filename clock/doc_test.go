package clock_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// parsePackage parses the non-test files of package clock.
func parsePackage(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return fset, files
}

// TestDocCommentsPresent checks that every exported identifier (including
// interface methods) has a doc comment, and that the package doc in doc.go
// names every exported top-level identifier.
func TestDocCommentsPresent(t *testing.T) {
	fset, files := parsePackage(t)
	pkgDoc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	missing := func(pos token.Pos, name string) {
		t.Errorf("%s: exported %s has no doc comment", fset.Position(pos), name)
	}
	for _, f := range files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil {
					recv := d.Recv.List[0].Type
					if star, ok := recv.(*ast.StarExpr); ok {
						recv = star.X
					}
					if id, ok := recv.(*ast.Ident); !ok || !id.IsExported() {
						continue
					}
				} else if !strings.Contains(string(pkgDoc), "["+d.Name.Name+"]") {
					t.Errorf("package doc does not mention [%s]", d.Name.Name)
				}
				if d.Doc == nil {
					missing(d.Pos(), d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					if d.Doc == nil && ts.Doc == nil {
						missing(ts.Pos(), ts.Name.Name)
					}
					if !strings.Contains(string(pkgDoc), "["+ts.Name.Name+"]") {
						t.Errorf("package doc does not mention [%s]", ts.Name.Name)
					}
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						for _, m := range it.Methods.List {
							if m.Doc == nil {
								missing(m.Pos(), ts.Name.Name+"."+m.Names[0].Name)
							}
						}
					}
				}
			}
		}
	}
}

// TestMessagesPrefixed checks that every panic and error message starts
// with "clock: ".
func TestMessagesPrefixed(t *testing.T) {
	fset, files := parsePackage(t)
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			var name string
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				if pkg, ok := fn.X.(*ast.Ident); ok {
					name = pkg.Name + "." + fn.Sel.Name
				}
			}
			switch name {
			case "panic", "errors.New", "fmt.Errorf", "fmt.Sprintf":
			default:
				return true
			}
			arg := call.Args[0]
			if inner, ok := arg.(*ast.CallExpr); ok && len(inner.Args) > 0 {
				arg = inner.Args[0] // panic(fmt.Sprintf("...", ...))
			}
			lit, ok := arg.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(s, "clock: ") {
				t.Errorf("%s: message %q does not start with \"clock: \"", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
}
