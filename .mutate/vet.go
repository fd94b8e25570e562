package main

import (
	"fmt"
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/atomic"
	"golang.org/x/tools/go/analysis/passes/bools"
	"golang.org/x/tools/go/analysis/passes/errorsas"
	"golang.org/x/tools/go/analysis/passes/ifaceassert"
	"golang.org/x/tools/go/analysis/passes/nilfunc"
	"golang.org/x/tools/go/analysis/passes/stringintconv"
)

// vetAnalyzers are the checks of go test's vet that a mutant can trip
// (a flipped "==" can make "x != a || x != b"); a mutant that trips one
// fails go test as a build failure, so the schema leaves it to its own go
// test run. printf, slog, tests, buildtags and directive look at what no
// mutant changes (format strings, test files, comments).
var vetAnalyzers = []*analysis.Analyzer{
	atomic.Analyzer, bools.Analyzer, errorsas.Analyzer,
	ifaceassert.Analyzer, nilfunc.Analyzer, stringintconv.Analyzer,
}

// vet runs the analyzers on a type-checked package; it returns the first
// diagnostic (or the analyzer's error), "" when clean.
func vet(pt *pkgTypes, files []*ast.File, pkg *types.Package, info *types.Info) (found string) {
	defer func() {
		if r := recover(); r != nil {
			found = fmt.Sprintf("vet analyzer panicked: %v", r)
		}
	}()
	results := map[*analysis.Analyzer]any{}
	var run func(a *analysis.Analyzer) error
	run = func(a *analysis.Analyzer) error {
		if _, ok := results[a]; ok {
			return nil
		}
		for _, r := range a.Requires {
			if err := run(r); err != nil {
				return err
			}
		}
		pass := &analysis.Pass{
			Analyzer: a, Fset: pt.fset, Files: files, Pkg: pkg, TypesInfo: info,
			TypesSizes: types.SizesFor("gc", "amd64"), ResultOf: results,
			Report: func(d analysis.Diagnostic) {
				if found == "" {
					found = pt.fset.Position(d.Pos).String() + ": " + d.Message
				}
			},
			ImportObjectFact:  func(types.Object, analysis.Fact) bool { return false },
			ImportPackageFact: func(*types.Package, analysis.Fact) bool { return false },
			ExportObjectFact:  func(types.Object, analysis.Fact) {},
			ExportPackageFact: func(analysis.Fact) {},
			AllObjectFacts:    func() []analysis.ObjectFact { return nil },
			AllPackageFacts:   func() []analysis.PackageFact { return nil },
		}
		res, err := a.Run(pass)
		if err != nil {
			return err
		}
		results[a] = res
		return nil
	}
	for _, a := range vetAnalyzers {
		if err := run(a); err != nil {
			return a.Name + ": " + err.Error()
		}
		if found != "" {
			return found
		}
	}
	return ""
}
