package dashboard

import (
	"math"
	"math/bits"
	"time"
)

// The latency histogram: log-linear buckets, 8 to an octave, from 1.024 µs
// (2^10 ns) to 68.7 s (2^36 ns), plus an underflow and an overflow bucket.
// A value is reported as the middle of its bucket, within 1/16 (6.25 %) of
// what was recorded for values inside the range.
const (
	histMinExp = 10 // values below 2^10 ns fall in bucket 0
	histMaxExp = 36 // values from 2^36 ns on fall in the last bucket
	histSub    = 8  // buckets per octave (a power of two)
	histSubLog = 3  // log2(histSub)
	histN      = 2 + (histMaxExp-histMinExp)*histSub
)

// hist is a histogram of durations: counts per bucket.
type hist [histN]uint32

// bucketOf returns the bucket of a duration d (negative counts as 0).
func bucketOf(d time.Duration) int {
	if d < 1<<histMinExp {
		return 0
	}
	if d >= 1<<histMaxExp {
		return histN - 1
	}
	v := uint64(d)
	e := bits.Len64(v) - 1 // 2^e <= v < 2^(e+1)
	sub := int(v>>(e-histSubLog)) & (histSub - 1)
	return 1 + (e-histMinExp)*histSub + sub
}

// bucketMid returns the value reported for bucket i, in nanoseconds: the
// middle of the bucket; half the lower bound of the range for the
// underflow bucket, the upper bound for the overflow bucket.
func bucketMid(i int) float64 {
	switch {
	case i <= 0:
		return float64(uint64(1)<<histMinExp) / 2
	case i >= histN-1:
		return float64(uint64(1) << histMaxExp)
	}
	i--
	e := histMinExp + i/histSub
	sub := i % histSub
	width := math.Ldexp(1, e-histSubLog)
	lo := math.Ldexp(1, e) + float64(sub)*width
	return lo + width/2
}

// quantiles returns the values (ns) at the quantiles qs (ascending, in
// (0, 1]) of h, which holds n values (n > 0): for each q, the value of the
// bucket that holds the ceil(q*n)-th smallest value.
func (h *hist) quantiles(n uint64, qs []float64, out []float64) {
	var seen uint64
	j := 0
	for i := 0; i < histN && j < len(qs); i++ {
		seen += uint64(h[i])
		for j < len(qs) && seen >= rank(qs[j], n) {
			out[j] = bucketMid(i)
			j++
		}
	}
	for ; j < len(qs); j++ { // not reached when n is h's total
		out[j] = bucketMid(histN - 1)
	}
}

// rank is the 1-based rank of the q-quantile among n values: ceil(q*n),
// at least 1.
func rank(q float64, n uint64) uint64 {
	r := uint64(math.Ceil(q * float64(n)))
	return max(r, 1)
}
