package exporttest

import (
	"slices"
	"testing"
)

// TestMedian: the middle of the sorted values (the upper one of an even
// count), leaving the values as they were.
func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 3},
		{[]float64{5}, 5},
	} {
		in := slices.Clone(c.xs)
		if got := median(c.xs); got != c.want {
			t.Errorf("median(%v) = %v, want %v", in, got, c.want)
		}
		if !slices.Equal(in, c.xs) {
			t.Errorf("median changed its values %v to %v", in, c.xs)
		}
	}
}
