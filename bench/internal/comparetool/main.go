// Command comparetool reads the output of interleaved benchmark runs of
// two builds, old and new (as bench/compare writes it), and prints, for
// each benchmark and each of its metrics, the median of each build over
// the rounds, the ratio of the medians new/old, and the spread of that
// ratio: the least and the greatest of the rounds' own ratios (round i of
// new over round i of old). The ns/op row of a benchmark also gives the
// median allocs/op of each build.
//
// Input: the lines of `go test -bench` output, each run preceded by a
// header line
//
//	# compare round=R side=old|new pkg=PKG
//
// Usage:
//
//	comparetool [file]   (standard input if no file)
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	in := io.Reader(os.Stdin)
	if len(os.Args) > 1 {
		f, err := os.Open(os.Args[1])
		if err != nil {
			fmt.Fprintln(os.Stderr, "comparetool:", err)
			os.Exit(1)
		}
		defer f.Close()
		in = f
	}
	res, err := parse(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "comparetool:", err)
		os.Exit(1)
	}
	write(os.Stdout, summarize(res))
}

// key names one metric of one benchmark of one package.
type key struct {
	pkg, bench, unit string
}

// results holds each metric's values by side ("old", "new") and round, in
// the order the metrics first appear.
type results struct {
	order  []key
	values map[key]map[string]map[int]float64
}

// parse reads the interleaved output. A benchmark that appears twice in
// the same round and side keeps its last value. Input with no result at
// all is errNoResults.
func parse(r io.Reader) (*results, error) {
	res := &results{values: map[key]map[string]map[int]float64{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	round, side, pkg := -1, "", ""
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if h, ok := strings.CutPrefix(t, "# compare "); ok {
			round, side, pkg = -1, "", ""
			for _, f := range strings.Fields(h) {
				k, v, _ := strings.Cut(f, "=")
				switch k {
				case "round":
					n, err := strconv.Atoi(v)
					if err != nil {
						return nil, fmt.Errorf("line %d: round %q: %w", line, v, err)
					}
					round = n
				case "side":
					side = v
				case "pkg":
					pkg = v
				}
			}
			if round < 0 || (side != "old" && side != "new") {
				return nil, fmt.Errorf("line %d: header %q: want round=N side=old|new", line, t)
			}
			continue
		}
		if !strings.HasPrefix(t, "Benchmark") || side == "" {
			continue
		}
		f := strings.Fields(t)
		// Name, iterations, then pairs of value and unit.
		if len(f) < 4 || len(f)%2 != 0 {
			continue
		}
		if _, err := strconv.ParseInt(f[1], 10, 64); err != nil {
			continue // a benchmark's log line, not a result
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: value %q of %s: %w", line, f[i], f[0], err)
			}
			k := key{pkg, f[0], f[i+1]}
			m := res.values[k]
			if m == nil {
				m = map[string]map[int]float64{"old": {}, "new": {}}
				res.values[k] = m
				res.order = append(res.order, k)
			}
			m[side][round] = v
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(res.order) == 0 {
		return nil, errNoResults
	}
	return res, nil
}

// errNoResults is parse's error for input with no benchmark result after
// a header: the -bench pattern matched no benchmark of any package.
var errNoResults = errors.New("no benchmark results: the -bench pattern matched no benchmark")

// row is the summary of one metric.
type row struct {
	key
	oldMed, newMed   float64 // NaN-free: valid only if nOld, nNew > 0
	nOld, nNew       int
	ratio            float64 // newMed / oldMed; valid if hasRatio
	lo, hi           float64 // the least and greatest per-round ratio; valid if nPairs > 0
	nPairs           int
	hasRatio         bool
	allocOld, allocN string // median allocs/op of each side, on ns/op rows
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func vals(m map[int]float64) []float64 {
	out := make([]float64, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// summarize computes the rows of every metric but B/op and allocs/op,
// which go into the ns/op row as the allocation columns.
func summarize(res *results) []row {
	var rows []row
	for _, k := range res.order {
		if k.unit == "B/op" || k.unit == "allocs/op" {
			continue
		}
		m := res.values[k]
		r := row{key: k, nOld: len(m["old"]), nNew: len(m["new"])}
		if r.nOld > 0 {
			r.oldMed = median(vals(m["old"]))
		}
		if r.nNew > 0 {
			r.newMed = median(vals(m["new"]))
		}
		if r.nOld > 0 && r.nNew > 0 && r.oldMed != 0 {
			r.ratio, r.hasRatio = r.newMed/r.oldMed, true
		}
		for round, o := range m["old"] {
			n, ok := m["new"][round]
			if !ok || o == 0 {
				continue
			}
			q := n / o
			if r.nPairs == 0 || q < r.lo {
				r.lo = q
			}
			if r.nPairs == 0 || q > r.hi {
				r.hi = q
			}
			r.nPairs++
		}
		if k.unit == "ns/op" {
			a := res.values[key{k.pkg, k.bench, "allocs/op"}]
			r.allocOld, r.allocN = "-", "-"
			if a != nil && len(a["old"]) > 0 {
				r.allocOld = strconv.FormatFloat(median(vals(a["old"])), 'g', -1, 64)
			}
			if a != nil && len(a["new"]) > 0 {
				r.allocN = strconv.FormatFloat(median(vals(a["new"])), 'g', -1, 64)
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// num formats v with about four significant digits.
func num(v float64) string {
	switch a := max(v, -v); {
	case a == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.01:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func write(w io.Writer, rows []row) {
	tw := make([][]string, 0, len(rows)+1)
	tw = append(tw, []string{"benchmark", "unit", "old", "new", "new/old", "spread", "allocs old→new", "rounds"})
	pkg := ""
	for _, r := range rows {
		if r.pkg != pkg {
			pkg = r.pkg
			tw = append(tw, []string{"# " + pkg})
		}
		c := []string{r.bench, r.unit, "-", "-", "-", "-", "", fmt.Sprintf("%d/%d", r.nOld, r.nNew)}
		if r.nOld > 0 {
			c[2] = num(r.oldMed)
		}
		if r.nNew > 0 {
			c[3] = num(r.newMed)
		}
		if r.hasRatio {
			c[4] = strconv.FormatFloat(r.ratio, 'f', 3, 64)
		}
		if r.nPairs > 0 {
			c[5] = strconv.FormatFloat(r.lo, 'f', 2, 64) + "–" + strconv.FormatFloat(r.hi, 'f', 2, 64)
		}
		if r.unit == "ns/op" {
			c[6] = r.allocOld + "→" + r.allocN
		}
		tw = append(tw, c)
	}
	widths := map[int]int{}
	for _, c := range tw {
		if len(c) == 1 {
			continue
		}
		for i, s := range c {
			widths[i] = max(widths[i], len([]rune(s)))
		}
	}
	for _, c := range tw {
		if len(c) == 1 {
			fmt.Fprintln(w, c[0])
			continue
		}
		var b strings.Builder
		for i, s := range c {
			pad := widths[i] - len([]rune(s))
			if i >= 2 && i <= 4 { // numbers: right-aligned
				b.WriteString(strings.Repeat(" ", pad))
				b.WriteString(s)
			} else {
				b.WriteString(s)
				if i < len(c)-1 {
					b.WriteString(strings.Repeat(" ", pad))
				}
			}
			if i < len(c)-1 {
				b.WriteString("  ")
			}
		}
		fmt.Fprintln(w, b.String())
	}
}
