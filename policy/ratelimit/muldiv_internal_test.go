package ratelimit

import (
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"
)

// checkMulDivFloor fails t unless mulDivFloor(x, m, d) is floor(x·m/d),
// computed exactly with big.Int, and says whether that fits an int64.
func checkMulDivFloor(t interface{ Errorf(string, ...any) }, x, m, d int64) {
	want := new(big.Int).Mul(big.NewInt(x), big.NewInt(m))
	want.Div(want, big.NewInt(d)) // Euclidean division: the floor, for d > 0
	got, fits := mulDivFloor(x, m, d)
	switch {
	case fits != want.IsInt64():
		t.Errorf("mulDivFloor(%d, %d, %d) fits = %v, want %v (the quotient is %v)", x, m, d, fits, want.IsInt64(), want)
	case fits && got != want.Int64():
		t.Errorf("mulDivFloor(%d, %d, %d) = %d, want %v", x, m, d, got, want)
	}
}

// mulDivFloor rounds toward -Inf (a debt of tokens stays a whole debt), and
// reports a quotient out of int64's range, at both ends of it, and one
// whose 128-bit product is too large for the division.
func TestMulDivFloor(t *testing.T) {
	xs := []int64{0, 1, -1, 7, -7, 1 << 62, -1 << 62, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	ms := []int64{0, 1, 2, 3, 4, 1 << 61, math.MaxInt64}
	ds := []int64{1, 2, 3, 7, 1 << 61, math.MaxInt64}
	for _, x := range xs {
		for _, m := range ms {
			for _, d := range ds {
				checkMulDivFloor(t, x, m, d)
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.Int64().Draw(t, "x")
		m := rapid.Int64Min(0).Draw(t, "m")
		d := rapid.Int64Min(1).Draw(t, "d")
		checkMulDivFloor(t, x, m, d)
	})
}
