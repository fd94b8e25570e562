package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

const sample = `package p

func f(a, b int, ok bool) int {
	x := 0
	if a < b && ok {
		x = a + b
	}
	if ok {
		x++
	}
	g()
	return x
}

func g() {}
`

// TestGenerateEveryMutantParses checks each operator fires on the sample
// and that every mutant still parses (the harness edits source text).
func TestGenerateEveryMutantParses(t *testing.T) {
	ms, err := generate("p.go", "p.go", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{
		`p.go:4:7 const 0 -> 1`:               false,
		`p.go:5:7 boundary "<" -> "<="`:       false,
		`p.go:5:7 negate "<" -> ">="`:         false,
		`p.go:5:11 logical "&&" -> "||"`:      false,
		`p.go:5:5 negate negate if condition`: false,
		`p.go:6:3 remove remove "x = a + b"`:  false,
		`p.go:6:9 arith "+" -> "-"`:           false,
		`p.go:8:5 negate negate if condition`: false,
		`p.go:9:4 incdec "++" -> "--"`:        false,
		`p.go:9:3 remove remove "x++"`:        false,
		`p.go:11:2 remove remove "g()"`:       false,
	}
	for _, m := range ms {
		if _, ok := want[m.key()]; ok {
			want[m.key()] = true
		}
		out := m.apply([]byte(sample))
		if _, err := parser.ParseFile(token.NewFileSet(), "p.go", out, 0); err != nil {
			t.Errorf("%s: mutant does not parse: %v\n%s", m.key(), err, out)
		}
		if string(out) == sample {
			t.Errorf("%s: mutant does not change the source", m.key())
		}
	}
	for k, seen := range want {
		if !seen {
			t.Errorf("missing mutant %s", k)
		}
	}
}

func TestNegateIfWrapsCondition(t *testing.T) {
	ms, err := generate("p.go", "p.go", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.key() == `p.go:8:5 negate negate if condition` {
			if out := string(m.apply([]byte(sample))); !strings.Contains(out, "if !(ok) {") {
				t.Errorf("negated condition not found in:\n%s", out)
			}
			return
		}
	}
	t.Fatal("no negated if condition")
}

func TestCovered(t *testing.T) {
	cov := map[string][]block{"p.go": {
		{startLine: 3, startCol: 30, endLine: 5, endCol: 18, count: 1},
		{startLine: 5, startCol: 18, endLine: 7, endCol: 3, count: 0},
	}}
	for _, c := range []struct {
		line, col int
		want      bool
	}{{4, 7, true}, {6, 9, false}, {20, 1, true}} {
		if got := covered(cov, mutant{file: "/x/p.go", line: c.line, col: c.col}); got != c.want {
			t.Errorf("covered(%d:%d) = %v, want %v", c.line, c.col, got, c.want)
		}
	}
}
