package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"
)

// A mutant is one small change to one file: the bytes [start, end) of the
// original source are replaced by repl.
type mutant struct {
	file  string // absolute path
	rel   string // path shown in reports (relative to the repository top)
	line  int
	col   int
	op    string // operator class: boundary, negate, logical, arith, incdec, not, remove, const
	desc  string // e.g. `"<" -> "<="`
	start int
	end   int
	repl  string
}

// key identifies a mutant in reports and in the equivalent-mutant list.
func (m mutant) key() string {
	return m.rel + ":" + itoa(m.line) + ":" + itoa(m.col) + " " + m.op + " " + m.desc
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

// apply returns src with the mutant applied.
func (m mutant) apply(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(m.repl))
	out = append(out, src[:m.start]...)
	if m.repl == wrapNot {
		out = append(out, "!("...)
		out = append(out, src[m.start:m.end]...)
		out = append(out, ')')
	} else {
		out = append(out, m.repl...)
	}
	return append(out, src[m.end:]...)
}

// wrapNot as a replacement means: wrap the original text in "!(" and ")".
const wrapNot = "\x00!()"

// skipCalls are methods whose removed call only shows as a deadlock or a
// data race: mutating them costs a timeout each and teaches nothing.
var skipCalls = map[string]bool{
	"Lock": true, "Unlock": true, "RLock": true, "RUnlock": true,
}

// generate lists the mutants of one Go source file. It works on the source
// text (byte offsets from the parsed syntax tree), so every mutant keeps the
// file's layout and line numbers.
func generate(path, rel string, src []byte) ([]mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	var ms []mutant
	add := func(pos token.Pos, start, end token.Pos, op, desc, repl string) {
		p := fset.Position(pos)
		ms = append(ms, mutant{
			file: path, rel: rel, line: p.Line, col: p.Column, op: op, desc: desc,
			start: tf.Offset(start), end: tf.Offset(end), repl: repl,
		})
	}
	// text names a removed statement by its source, on one line.
	text := func(n ast.Node) string {
		t := strings.Join(strings.Fields(string(src[tf.Offset(n.Pos()):tf.Offset(n.End())])), " ")
		if len(t) > 60 {
			t = t[:57] + "..."
		}
		return "remove " + quote(t)
	}
	replOp := func(pos token.Pos, tok token.Token, op string, to token.Token) {
		add(pos, pos, pos+token.Pos(len(tok.String())), op,
			quote(tok.String())+" -> "+quote(to.String()), to.String())
	}
	// removable reports whether a statement may be deleted without making
	// the file fail to parse: it must sit directly in a statement list.
	removable := map[ast.Stmt]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BlockStmt:
			for _, s := range n.List {
				removable[s] = true
			}
		case *ast.CaseClause:
			for _, s := range n.Body {
				removable[s] = true
			}
		case *ast.CommClause:
			for _, s := range n.Body {
				removable[s] = true
			}
		}
		return true
	})
	walk := func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GenDecl:
			if n.Tok == token.CONST {
				// Constant declarations: only the 0 <-> 1 literals.
				ast.Inspect(n, func(c ast.Node) bool {
					if l, ok := c.(*ast.BasicLit); ok {
						constLit(l, add)
					}
					return true
				})
				return false
			}
		case *ast.BinaryExpr:
			switch n.Op {
			case token.LSS:
				replOp(n.OpPos, n.Op, "boundary", token.LEQ)
				replOp(n.OpPos, n.Op, "negate", token.GEQ)
			case token.LEQ:
				replOp(n.OpPos, n.Op, "boundary", token.LSS)
				replOp(n.OpPos, n.Op, "negate", token.GTR)
			case token.GTR:
				replOp(n.OpPos, n.Op, "boundary", token.GEQ)
				replOp(n.OpPos, n.Op, "negate", token.LEQ)
			case token.GEQ:
				replOp(n.OpPos, n.Op, "boundary", token.GTR)
				replOp(n.OpPos, n.Op, "negate", token.LSS)
			case token.EQL:
				replOp(n.OpPos, n.Op, "negate", token.NEQ)
			case token.NEQ:
				replOp(n.OpPos, n.Op, "negate", token.EQL)
			case token.LAND:
				replOp(n.OpPos, n.Op, "logical", token.LOR)
			case token.LOR:
				replOp(n.OpPos, n.Op, "logical", token.LAND)
			case token.ADD:
				if !isString(n.X) && !isString(n.Y) {
					replOp(n.OpPos, n.Op, "arith", token.SUB)
				}
			case token.SUB:
				replOp(n.OpPos, n.Op, "arith", token.ADD)
			case token.MUL:
				replOp(n.OpPos, n.Op, "arith", token.QUO)
			case token.QUO:
				replOp(n.OpPos, n.Op, "arith", token.MUL)
			case token.REM:
				replOp(n.OpPos, n.Op, "arith", token.MUL)
			}
		case *ast.UnaryExpr:
			switch n.Op {
			case token.NOT:
				add(n.OpPos, n.OpPos, n.OpPos+1, "not", `remove "!"`, "")
			case token.SUB:
				add(n.OpPos, n.OpPos, n.OpPos+1, "arith", `remove unary "-"`, "")
			}
		case *ast.IfStmt:
			switch c := n.Cond.(type) {
			case *ast.BinaryExpr:
				if c.Op == token.LAND || c.Op == token.LOR {
					negateCond(c, add)
				}
			case *ast.UnaryExpr:
				// "!x" is covered by removing the "!".
			default:
				negateCond(c, add)
			}
		case *ast.AssignStmt:
			switch n.Tok {
			case token.ADD_ASSIGN:
				replOp(n.TokPos, n.Tok, "arith", token.SUB_ASSIGN)
			case token.SUB_ASSIGN:
				replOp(n.TokPos, n.Tok, "arith", token.ADD_ASSIGN)
			}
			if n.Tok != token.DEFINE && removable[n] && !allBlank(n.Lhs) {
				add(n.Pos(), n.Pos(), n.End(), "remove", text(n), "")
			}
		case *ast.IncDecStmt:
			to := token.DEC
			if n.Tok == token.DEC {
				to = token.INC
			}
			replOp(n.TokPos, n.Tok, "incdec", to)
			if removable[n] {
				add(n.Pos(), n.Pos(), n.End(), "remove", text(n), "")
			}
		case *ast.ExprStmt:
			if call, ok := n.X.(*ast.CallExpr); ok && removable[n] && !skipCall(call) {
				add(n.Pos(), n.Pos(), n.End(), "remove", text(n), "")
			}
		case *ast.BasicLit:
			constLit(n, add)
		case *ast.Ident:
			switch n.Name {
			case "true":
				add(n.Pos(), n.Pos(), n.End(), "const", `true -> false`, "false")
			case "false":
				add(n.Pos(), n.Pos(), n.End(), "const", `false -> true`, "true")
			}
		}
		return true
	}
	ast.Inspect(f, walk)
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].start < ms[j].start })
	return ms, nil
}

func constLit(l *ast.BasicLit, add func(pos, start, end token.Pos, op, desc, repl string)) {
	if l.Kind != token.INT {
		return
	}
	switch l.Value {
	case "0":
		add(l.Pos(), l.Pos(), l.End(), "const", "0 -> 1", "1")
	case "1":
		add(l.Pos(), l.Pos(), l.End(), "const", "1 -> 0", "0")
	}
}

func negateCond(c ast.Expr, add func(pos, start, end token.Pos, op, desc, repl string)) {
	add(c.Pos(), c.Pos(), c.End(), "negate", "negate if condition", wrapNot)
}

func isString(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING || e.Kind == token.CHAR
	case *ast.BinaryExpr:
		return isString(e.X) || isString(e.Y)
	case *ast.CallExpr:
		name := callName(e)
		return strings.HasSuffix(name, "String") || strings.HasSuffix(name, "Sprintf") ||
			strings.HasSuffix(name, "Error") || strings.HasSuffix(name, "Itoa") ||
			strings.HasSuffix(name, "FormatInt") || strings.HasSuffix(name, "FormatFloat") ||
			name == "string"
	case *ast.ParenExpr:
		return isString(e.X)
	}
	return false
}

func allBlank(lhs []ast.Expr) bool {
	for _, e := range lhs {
		if id, ok := e.(*ast.Ident); !ok || id.Name != "_" {
			return false
		}
	}
	return true
}

func skipCall(c *ast.CallExpr) bool {
	if sel, ok := c.Fun.(*ast.SelectorExpr); ok {
		return skipCalls[sel.Sel.Name]
	}
	return false
}

func callName(c *ast.CallExpr) string {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
		return f.Sel.Name
	case *ast.IndexExpr:
		if id, ok := f.X.(*ast.Ident); ok {
			return id.Name
		}
	}
	return "func"
}

func quote(s string) string { return `"` + s + `"` }
