package main

import (
	"fmt"
	"time"
)

// main prints what the functions of lib.go return on a few inputs; the
// harness's tests compare its output under each mutant, applied alone or
// active in the schema.
func main() {
	for _, a := range []int{-2, 0, 1, 3} {
		for _, b := range []int{-1, 0, 2} {
			fmt.Println(a, b, cmp(a, b), arith(a, b), nested(a, b, a < b), count(a+2), pick(a, b))
		}
	}
	fmt.Println(dur(3), table, flags(true, false), scale(2.5), label(1))
	var c counter
	c.add(3)
	c.add(-1)
	fmt.Println(c.n, c.hits)
	fmt.Println(sum([]int{1, 2, 3}), time.Duration(0), both(1), both(3))
	fmt.Println(neg(-1))
	fmt.Println(neg(0))
}
