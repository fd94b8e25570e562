package sim

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteTable writes the totals of results as a text table, one row per
// result: client calls and how they ended, server calls, the amplification
// factor (server calls per client call) and when the last call ended. It
// returns the first error of w.
func WriteTable(w io.Writer, results ...*Result) error {
	width := len("policy set")
	for _, r := range results {
		width = max(width, len(r.Name))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tcalls\tok\trefused\tfailed\tserver calls\tamplification\tlast call ended\t\n", width, "policy set")
	for _, r := range results {
		fmt.Fprintf(tw, "%-*s\t%d\t%d\t%d\t%d\t%d\t%.2f\t%v\t\n", width, r.Name, r.Calls, r.Successes, r.Refused, r.Failures,
			r.ServerCalls, r.Amplification(), r.Finished.Round(time.Millisecond))
	}
	return tw.Flush()
}
