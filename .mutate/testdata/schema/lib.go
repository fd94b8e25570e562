package main

import (
	"strings"
	"time"
)

const size = 1 + 1 // constant context: not in the schema

var table [size + 1]int // array length: constant

func cmp(a, b int) bool {
	return a < b && b != 0 || a >= 1
}

func arith(a, b int) int {
	x := a*b - 1
	x += b % 2
	return -x + a/2
}

// nested has mutants inside mutants: the "+" inside the "<", the "<"
// inside the if condition.
func nested(a, b int, ok bool) int {
	if a+b < 1 && !ok {
		return 0
	}
	return (a + 1) * (b - 1)
}

func count(n int) int {
	c := 0
	for i := 0; i < n; i++ {
		c++
	}
	return c
}

func pick(a, b int) int {
	switch {
	case a > b:
		return a
	case a == b:
		return 0
	}
	return b
}

func dur(n int) time.Duration {
	return time.Duration(n) * time.Second / 2
}

func flags(a, b bool) []bool {
	return []bool{a || b, !a, true, a && !b}
}

type weight float64

func scale(f float64) weight {
	return weight(f * 2)
}

func label(n int) string {
	var b strings.Builder
	if n > 0 {
		b.WriteString("pos")
	}
	return b.String() + "!"
}

type counter struct{ n, hits int }

func (c *counter) add(d int) {
	c.n += d
	c.hits++
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		if x == 0 {
			panic("zero")
		}
		t += x
	}
	return t
}

// both's "&&" -> "||" trips go vet's bool check: go test fails it as a
// build failure, so it stays out of the schema.
func both(x int) bool {
	return x != 1 && x != 2
}

// neg's 1 in x == -1 is in the schema; the float one is not (-0.0).
func neg(x int) (bool, float64) {
	var f float64 = -1
	return x == -1, f
}
