package sim

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/internal/testwait"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// wellFormed parses svg as XML and counts its elements by name.
func wellFormed(t *testing.T, svg []byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return counts
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
}

// writeSVG is WriteSVG, failing t if it has not returned within 2 s (a
// bound for failure only: it takes milliseconds).
func writeSVG(t *testing.T, w io.Writer, title string, results ...*Result) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- WriteSVG(w, title, results...) }()
	return testwait.RecvFor(t, done, 2*time.Second, "WriteSVG to return")
}

func TestWriteSVG(t *testing.T) {
	s, set := collapseLike(1)
	plain := set
	plain.Name = `plain <&> "as is"`
	plain.Build = identity
	results := Compare(s, set, plain)
	var b bytes.Buffer
	if err := writeSVG(t, &b, "a title & more", results...); err != nil {
		t.Fatal(err)
	}
	counts := wellFormed(t, b.Bytes())
	if got, want := counts["polyline"], 2*len(svgSeries); got != want {
		t.Errorf("%d polylines, want %d (one per series per panel)", got, want)
	}
	svg := b.String()
	for _, want := range []string{"a title &amp; more", "everything", "plain &lt;&amp;&gt; &#34;as is&#34;", "+40 clients", "server hang", "breaker open", "virtual time"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the SVG lacks %q", want)
		}
	}
	for _, r := range results {
		if want := latencySummary(r); !strings.Contains(svg, want) || !strings.Contains(want, "p99 ") {
			t.Errorf("the SVG lacks the latency line %q of %s", want, r.Name)
		}
	}
	if !strings.Contains(svg, svgStateColor[breaker.Open]) {
		t.Errorf("the SVG shows no open breaker, though the run's breaker opened")
	}
}

func TestWriteSVGNoResults(t *testing.T) {
	var b bytes.Buffer
	if err := writeSVG(t, &b, "empty"); err != nil {
		t.Fatal(err)
	}
	wellFormed(t, b.Bytes())
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteSVGError(t *testing.T) {
	s, set := collapseLike(1)
	if err := writeSVG(t, failingWriter{}, "x", Run(s, set)); err == nil || err.Error() != "disk full" {
		t.Errorf("WriteSVG = %v, want the writer's error", err)
	}
}

func TestDownsample(t *testing.T) {
	c, o, h := breaker.Closed, breaker.Open, breaker.HalfOpen
	r := &Result{Bucket: time.Second,
		Series:   []Totals{{Calls: 1}, {Calls: 2}, {Calls: 3}, {Calls: 4}, {Calls: 5}},
		InFlight: []int{1, 5, 2, 2, 3},
		Breaker:  []breaker.State{c, h, o, c, c},
	}
	d := downsample(r, 2)
	want := &Result{Bucket: 3 * time.Second,
		Series:   []Totals{{Calls: 6}, {Calls: 13}}, // the last bucket holds 2 of 3: 9 × 3/2
		InFlight: []int{5, 3},
		Breaker:  []breaker.State{o, c},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("downsample mismatch (-want +got):\n%s", diff)
	}
	if downsample(r, 5) != r {
		t.Errorf("downsample of a short series copied it")
	}

	// A series of a whole number of merged buckets: no short last bucket,
	// none to spare; half-open is more severe than closed.
	r = &Result{Bucket: time.Second,
		Series:   []Totals{{Calls: 1}, {Calls: 2}, {Calls: 3}, {Calls: 4}, {Calls: 5}, {Calls: 6}},
		InFlight: []int{1, 1, 1, 2, 2, 2},
		Breaker:  []breaker.State{c, h, c, h, h, c},
	}
	want = &Result{Bucket: 3 * time.Second,
		Series:   []Totals{{Calls: 6}, {Calls: 15}},
		InFlight: []int{1, 2},
		Breaker:  []breaker.State{h, h},
	}
	if diff := cmp.Diff(want, downsample(r, 2)); diff != "" {
		t.Errorf("downsample of 6 buckets to 2 mismatch (-want +got):\n%s", diff)
	}
}

func TestNiceStep(t *testing.T) {
	var got []float64
	// The edges between 1, 2, 5 and 10 times a power of ten are 1.5, 3.5
	// and 7.5 times it, each going up; a step below 1 is as round.
	in := []float64{0, -3, 0.9, 0.2, 2.4, 4, 8, 130, 50, 1.49, 1.5, 3.49, 3.5, 7.49, 7.5}
	for _, x := range in {
		got = append(got, niceStep(x))
	}
	if diff := cmp.Diff([]float64{1, 1, 1, 0.2, 2, 5, 10, 100, 50, 1, 2, 2, 5, 5, 10}, got); diff != "" {
		t.Errorf("niceStep mismatch (-want +got):\n%s", diff)
	}
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	r := &Result{Name: "retry", Totals: Totals{Calls: 10, Successes: 7, Refused: 1, Failures: 2, ServerCalls: 25}, Finished: 1500 * time.Millisecond}
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "  policy set  calls  ok  refused  failed  server calls  amplification  last call ended\n" +
		"  retry          10   7        1       2            25           2.50             1.5s\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("table mismatch (-want +got):\n%s", diff)
	}
}
