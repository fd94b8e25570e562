package resilienceprom

import (
	"sort"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// histogram counts durations in buckets with atomic adds, so that a call
// does no Prometheus work: Collect turns it into a constant histogram.
type histogram struct {
	bounds []float64       // upper bounds in seconds, increasing
	counts []atomic.Uint64 // per bucket (not cumulative), the last one +Inf
	sum    atomic.Int64    // nanoseconds
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]atomic.Uint64, len(bounds)+1)}
}

func (h *histogram) observe(d time.Duration) {
	h.counts[sort.SearchFloat64s(h.bounds, d.Seconds())].Add(1)
	h.sum.Add(int64(d))
}

// metric is h as a Prometheus histogram, or the error of a label value
// Prometheus does not accept. Its count is the sum of its
// buckets, so the two agree; a collection during an observation may read
// the sum of an observation whose bucket it has not read yet.
func (h *histogram) metric(desc *prometheus.Desc, labels ...string) (prometheus.Metric, error) {
	buckets := make(map[float64]uint64, len(h.bounds))
	var n uint64
	for i, b := range h.bounds {
		n += h.counts[i].Load()
		buckets[b] = n
	}
	n += h.counts[len(h.bounds)].Load()
	return prometheus.NewConstHistogram(desc, n, time.Duration(h.sum.Load()).Seconds(), buckets, labels...)
}
