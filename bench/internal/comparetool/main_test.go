package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const sample = `# compare round=1 side=old pkg=./bench
goos: linux
BenchmarkAllow/resilience/serial-2   	 3000000	        70.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkPaired/closed-2   	 10	   5000 ns/op	  20.0 resilience-ns/call	 0.150 resilience/gobreaker	 0 B/op	 0 allocs/op
    paired_test.go:12: a log line 12 words
PASS
# compare round=1 side=new pkg=./bench
BenchmarkAllow/resilience/serial-2   	 3000000	        35.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkPaired/closed-2   	 10	   5000 ns/op	  10.0 resilience-ns/call	 0.090 resilience/gobreaker	 0 B/op	 0 allocs/op
# compare round=2 side=old pkg=./bench
BenchmarkAllow/resilience/serial-2   	 3000000	        80.0 ns/op	       0 B/op	       1 allocs/op
BenchmarkPaired/closed-2   	 10	   5000 ns/op	  30.0 resilience-ns/call	 0.150 resilience/gobreaker	 0 B/op	 0 allocs/op
# compare round=2 side=new pkg=./bench
BenchmarkAllow/resilience/serial-2   	 3000000	        60.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkPaired/closed-2   	 10	   5000 ns/op	  12.0 resilience-ns/call	 0.120 resilience/gobreaker	 0 B/op	 0 allocs/op
# compare round=3 side=old pkg=./bench
BenchmarkAllow/resilience/serial-2   	 3000000	        90.0 ns/op	       0 B/op	       1 allocs/op
# compare round=3 side=new pkg=./bench
BenchmarkAllow/resilience/serial-2   	 3000000	        45.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkOnlyNew-2   	 100	  7 ns/op
`

func TestSummarize(t *testing.T) {
	res, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	got := summarize(res)
	want := []row{
		// old 70, 80, 90 (median 80); new 35, 60, 45 (median 45);
		// per-round ratios 0.5, 0.75, 0.5.
		{key: key{"./bench", "BenchmarkAllow/resilience/serial-2", "ns/op"}, oldMed: 80, newMed: 45, nOld: 3, nNew: 3,
			ratio: 45.0 / 80, hasRatio: true, lo: 0.5, hi: 0.75, nPairs: 3, allocOld: "1", allocN: "0"},
		{key: key{"./bench", "BenchmarkPaired/closed-2", "ns/op"}, oldMed: 5000, newMed: 5000, nOld: 2, nNew: 2,
			ratio: 1, hasRatio: true, lo: 1, hi: 1, nPairs: 2, allocOld: "0", allocN: "0"},
		// Two rounds: the median is the mean of the middle two.
		{key: key{"./bench", "BenchmarkPaired/closed-2", "resilience-ns/call"}, oldMed: 25, newMed: 11, nOld: 2, nNew: 2,
			ratio: 11.0 / 25, hasRatio: true, lo: 0.4, hi: 0.5, nPairs: 2},
		{key: key{"./bench", "BenchmarkPaired/closed-2", "resilience/gobreaker"}, oldMed: 0.15, newMed: 0.105, nOld: 2, nNew: 2,
			ratio: 0.105 / 0.15, hasRatio: true, lo: 0.6, hi: 0.8, nPairs: 2},
		// Only in the new build: no ratio, no spread.
		{key: key{"./bench", "BenchmarkOnlyNew-2", "ns/op"}, newMed: 7, nNew: 1, allocOld: "-", allocN: "-"},
	}
	approx := cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })
	if diff := cmp.Diff(want, got, approx, cmp.AllowUnexported(row{}, key{})); diff != "" {
		t.Errorf("summarize mismatch (-want +got):\n%s", diff)
	}
}

func TestParseRejectsBadHeader(t *testing.T) {
	for _, in := range []string{
		"# compare round=x side=old pkg=p\n",
		"# compare round=1 side=mid pkg=p\n",
		"# compare side=old pkg=p\n",
	} {
		if _, err := parse(strings.NewReader(in)); err == nil {
			t.Errorf("parse(%q) = nil error, want one", in)
		}
	}
}

func TestWrite(t *testing.T) {
	res, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	write(&b, summarize(res))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 7 {
		t.Fatalf("got %d lines, want 7 (header, package, 5 rows):\n%s", len(lines), b.String())
	}
	for _, want := range []string{"80.00", "45.00", "0.562", "0.50–0.75", "1→0", "3/3"} {
		if !strings.Contains(lines[2], want) {
			t.Errorf("row %q lacks %q", lines[2], want)
		}
	}
	if f := strings.Fields(lines[6]); f[4] != "-" || f[5] != "-" {
		t.Errorf("row of a benchmark only in new: %q, want - for the ratio and the spread", lines[6])
	}
}

func TestParseRefusesInputWithNoResults(t *testing.T) {
	for _, in := range []string{
		"",
		"# compare round=1 side=old pkg=./bench\ntesting: warning: no tests to run\nPASS\n# compare round=1 side=new pkg=./bench\nPASS\n",
	} {
		if _, err := parse(strings.NewReader(in)); !errors.Is(err, errNoResults) {
			t.Errorf("parse(%q): err = %v, want errNoResults", in, err)
		}
	}
}
