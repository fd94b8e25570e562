package resilienceprom_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/f0b5b96b/resilience/resilienceprom"
)

// newCollector returns a Collector made by New with opts, registered with
// a registry of its own.
func newCollector(tb testing.TB, opts ...resilienceprom.Option) *resilienceprom.Collector {
	tb.Helper()
	c, err := resilienceprom.New(prometheus.NewPedanticRegistry(), opts...)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return c
}

// histogram is the exposition of one series of the histogram name, with
// labels (`k="v",...`, in name order; le is added) and holding values (in
// seconds): one bucket for each bound of les and +Inf, counting the values
// at or below it, then their sum and count.
func histogram(name, labels string, les []float64, values ...float64) string {
	var b strings.Builder
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	for _, le := range les {
		n := 0
		for _, v := range values {
			if v <= le {
				n++
			}
		}
		fmt.Fprintf(&b, "%s_bucket{%s,le=%q} %d\n", name, labels, strconv.FormatFloat(le, 'g', -1, 64), n)
	}
	fmt.Fprintf(&b, "%s_bucket{%s,le=\"+Inf\"} %d\n", name, labels, len(values))
	fmt.Fprintf(&b, "%s_sum{%s} %s\n", name, labels, strconv.FormatFloat(sum, 'g', -1, 64))
	fmt.Fprintf(&b, "%s_count{%s} %d\n", name, labels, len(values))
	return b.String()
}
