package dashboard

import (
	"math"
	"testing"
	"time"
)

// A guard's value is written as JSON writes a number: an integer as one
// (up to 2^53, where float64 integers stop being exact), another with 6
// significant digits; null for NaN and ±Inf, which JSON cannot spell.
func TestAppendNumber(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {3, "3"}, {-4, "-4"}, {2.5, "2.5"}, {1.0 / 3, "0.333333"}, {-1234567.5, "-1.23457e+06"},
		{1<<53 - 1, "9007199254740991"}, {-(1<<53 - 1), "-9007199254740991"}, {1 << 53, "9.0072e+15"},
		{math.NaN(), "null"}, {math.Inf(1), "null"}, {math.Inf(-1), "null"},
	} {
		if got := string(appendNumber(nil, c.v)); got != c.want {
			t.Errorf("appendNumber(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

// A bucket reads as its middle: 1.024 µs to 1.152 µs reads 1.088 µs; the
// underflow bucket reads half the range's lower bound (512 ns), the
// overflow bucket its upper bound (2^36 ns).
func TestBucketMid(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want float64
	}{
		{0, 512},
		{1 << histMinExp, 1088},
		{1<<histMinExp + 1<<(histMinExp-histSubLog), 1088 + 128},
		{3 << (histMinExp - 1), 1536 + 64},
		{1<<histMaxExp - 1, 1<<histMaxExp - 1<<(histMaxExp-histSubLog-2)},
		{1 << histMaxExp, 1 << histMaxExp},
	} {
		if got := bucketMid(bucketOf(c.d)); got != c.want {
			t.Errorf("bucketMid(bucketOf(%d)) = %v, want %v", c.d, got, c.want)
		}
	}
}
