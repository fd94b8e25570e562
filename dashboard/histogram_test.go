package dashboard

import (
	"math"
	"testing"
	"time"
)

// Every duration in the histogram's range is reported within 1/16 of
// itself, and buckets are in the order of the durations.
func TestBucketAccuracy(t *testing.T) {
	prev := 0
	for d := time.Duration(1 << histMinExp); d < 1<<histMaxExp; d = d + d/97 + 1 {
		b := bucketOf(d)
		if b < prev {
			t.Fatalf("bucketOf(%v) = %d, below bucketOf of a smaller duration (%d)", d, b, prev)
		}
		prev = b
		got := bucketMid(b)
		if rel := math.Abs(got-float64(d)) / float64(d); rel > 1.0/16 {
			t.Fatalf("bucketMid(bucketOf(%v)) = %v ns, off by %.1f%% (want <= 6.25%%)", d, got, 100*rel)
		}
	}
	for _, c := range []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, 0}, {0, 0}, {1<<histMinExp - 1, 0}, {1 << histMinExp, 1},
		{1<<histMaxExp - 1, histN - 2}, {1 << histMaxExp, histN - 1}, {math.MaxInt64, histN - 1},
	} {
		if got := bucketOf(c.d); got != c.want {
			t.Errorf("bucketOf(%d) = %d, want %d", c.d, got, c.want)
		}
	}
}

func TestQuantiles(t *testing.T) {
	var h hist
	// 1 ms to 100 ms, one each: p50 = 50 ms, p90 = 90 ms, p99 = 99 ms.
	for i := 1; i <= 100; i++ {
		h[bucketOf(time.Duration(i)*time.Millisecond)]++
	}
	out := make([]float64, 3)
	within(t, "quantiles of 100 values", func() struct{} { h.quantiles(100, percentiles, out); return struct{}{} })
	for i, want := range []float64{50e6, 90e6, 99e6} {
		if rel := math.Abs(out[i]-want) / want; rel > 1.0/16 {
			t.Errorf("quantile %v = %.3g ns, want %.3g ns within 6.25%%", percentiles[i], out[i], want)
		}
	}
	// One value: every quantile is it.
	var one hist
	one[bucketOf(3*time.Millisecond)]++
	within(t, "quantiles of 1 value", func() struct{} { one.quantiles(1, percentiles, out); return struct{}{} })
	for i, v := range out {
		if rel := math.Abs(v-3e6) / 3e6; rel > 1.0/16 {
			t.Errorf("quantile %v of one 3 ms value = %.3g ns", percentiles[i], v)
		}
	}
}
