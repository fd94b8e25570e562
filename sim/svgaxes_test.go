package sim

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// The tests of this file read a plot of WriteSVG back through its own
// axes, as a reader of the image would: the tick labels of the y axis
// (calls / s) and of the time axis (virtual seconds) give the scales, and
// every point of every series, every shaded outage or group of clients and
// every stretch of the breaker band must then sit where its value and its
// time say, within the rounding of the coordinates to a tenth of a unit.

// svgElem is one element of an SVG: its name, attributes and text.
type svgElem struct {
	name string
	attr map[string]string
	text string
}

func (e svgElem) num(t *testing.T, a string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(e.attr[a], 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", e.name, a, e.attr[a], err)
	}
	return v
}

func parseSVG(t *testing.T, svg []byte) []svgElem {
	t.Helper()
	var es []svgElem
	var open []int
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return es
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := svgElem{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				e.attr[a.Name.Local] = a.Value
			}
			open = append(open, len(es))
			es = append(es, e)
		case xml.CharData:
			if len(open) > 0 {
				es[open[len(open)-1]].text += string(tok)
			}
		case xml.EndElement:
			open = open[:len(open)-1]
		}
	}
}

// scale maps values to coordinates: c = a + b·v, fitted on two ticks.
type scale struct{ a, b float64 }

func (s scale) at(v float64) float64 { return s.a + s.b*v }

func fit(v0, c0, v1, c1 float64) scale {
	b := (c1 - c0) / (v1 - v0)
	return scale{a: c0 - b*v0, b: b}
}

// panelAxes is what one panel's axes say.
type panelAxes struct {
	top, bottom float64 // the y axis's ends: the plot area
	left, right float64 // the time axis's ends
	y, x        scale   // calls/s → y, seconds → x
	yTicks      []float64
	tTicks      []float64
	tLabelY     []float64 // the baselines of the time ticks' labels
}

// readAxes reads the axes of every panel: each panel has its grid (grey
// lines, each followed by its value label), the y axis and the time axis
// (black lines), and the time ticks (short black lines, each followed by
// its label in seconds).
func readAxes(t *testing.T, es []svgElem) []panelAxes {
	t.Helper()
	var ps []panelAxes
	var cur *panelAxes
	var gridV, gridY []float64
	var tickS, tickX, tickY []float64
	flush := func() {
		if cur == nil {
			return
		}
		if len(gridV) < 2 || len(tickS) < 2 {
			t.Fatalf("a panel has %d grid lines and %d time ticks, want 2 or more of each", len(gridV), len(tickS))
		}
		cur.y = fit(gridV[0], gridY[0], gridV[len(gridV)-1], gridY[len(gridY)-1])
		cur.x = fit(tickS[0], tickX[0], tickS[len(tickS)-1], tickX[len(tickX)-1])
		for i := range gridV {
			if d := math.Abs(cur.y.at(gridV[i]) - gridY[i]); d > 0.2 {
				t.Errorf("grid line %v at y %v, %v off the axis's scale", gridV[i], gridY[i], d)
			}
		}
		for i := range tickS {
			if d := math.Abs(cur.x.at(tickS[i]) - tickX[i]); d > 0.2 {
				t.Errorf("time tick %vs at x %v, %v off the axis's scale", tickS[i], tickX[i], d)
			}
		}
		cur.yTicks, cur.tTicks, cur.tLabelY = gridV, tickS, tickY
		ps = append(ps, *cur)
		gridV, gridY, tickS, tickX, tickY = nil, nil, nil, nil, nil
	}
	for i, e := range es {
		if e.name != "line" {
			continue
		}
		next := svgElem{}
		if i+1 < len(es) {
			next = es[i+1]
		}
		switch {
		case e.attr["stroke"] == "#dddddd":
			if cur == nil || len(tickS) > 0 {
				flush()
				cur = &panelAxes{}
			}
			v, err := strconv.ParseFloat(next.text, 64)
			if next.name != "text" || err != nil {
				t.Fatalf("grid line at y %s labelled %q, want a number", e.attr["y1"], next.text)
			}
			gridV, gridY = append(gridV, v), append(gridY, e.num(t, "y1"))
		case e.attr["stroke"] == "black" && e.attr["x1"] == e.attr["x2"] && e.num(t, "y2")-e.num(t, "y1") == 4:
			s, err := strconv.ParseFloat(strings.TrimSuffix(next.text, "s"), 64)
			if next.name != "text" || !strings.HasSuffix(next.text, "s") || err != nil {
				t.Fatalf("time tick at x %s labelled %q, want seconds", e.attr["x1"], next.text)
			}
			tickS, tickX, tickY = append(tickS, s), append(tickX, e.num(t, "x1")), append(tickY, next.num(t, "y"))
		case e.attr["stroke"] == "black" && e.attr["x1"] == e.attr["x2"]:
			cur.left, cur.top, cur.bottom = e.num(t, "x1"), e.num(t, "y1"), e.num(t, "y2")
		case e.attr["stroke"] == "black" && e.attr["y1"] == e.attr["y2"]:
			cur.right = e.num(t, "x2")
			if got := e.num(t, "x1"); got != cur.left {
				t.Errorf("the time axis starts at x %v, the y axis is at %v", got, cur.left)
			}
			if got := e.num(t, "y1"); got != cur.bottom {
				t.Errorf("the time axis is at y %v, the y axis ends at %v", got, cur.bottom)
			}
		}
	}
	flush()
	return ps
}

// points parses an SVG points list.
func points(t *testing.T, s string) [][2]float64 {
	t.Helper()
	var ps [][2]float64
	for _, f := range strings.Fields(s) {
		var x, y float64
		if _, err := fmt.Sscanf(f, "%g,%g", &x, &y); err != nil {
			t.Fatalf("point %q: %v", f, err)
		}
		ps = append(ps, [2]float64{x, y})
	}
	return ps
}

func near(a, b float64) bool { return math.Abs(a-b) <= 0.3 }

// axesResult is a hand-made result of a 10 s run in 1 s buckets, with a
// watched breaker, an outage, a spike of clients and latencies.
func axesResult(name string, scale int) *Result {
	c, o, h := breaker.Closed, breaker.Open, breaker.HalfOpen
	r := &Result{Name: name, Duration: 10 * time.Second, Bucket: time.Second,
		Breaker: []breaker.State{c, c, o, o, o, h, c, c, c, c},
		Outages: []Outage{{Start: 2 * time.Second, End: 4500 * time.Millisecond, Mode: Down}},
		// Only the groups that come and go are shaded: not one there from the
		// start (5, 13), nor one there to the end (9, 11). N 0 means 1.
		Clients: []Clients{{N: 5}, {N: 7, Start: 6 * time.Second, Stop: 8 * time.Second},
			{N: 9, Start: 3 * time.Second}, {N: 11, Start: 3 * time.Second, Stop: 10 * time.Second},
			{N: 13, Stop: 5 * time.Second}, {N: 0, Start: time.Second, Stop: 1500 * time.Millisecond}},
		Latencies: []time.Duration{3 * time.Millisecond, 5 * time.Millisecond, 40 * time.Millisecond},
	}
	for i := range 10 {
		tot := Totals{ServerCalls: (3*i + 5) * scale, Successes: (2*i + 1) * scale, Refused: (i % 3) * scale, Failures: (9 - i) * scale}
		tot.Calls = tot.Successes + tot.Refused + tot.Failures
		r.Series = append(r.Series, tot)
		r.InFlight = append(r.InFlight, i)
		r.Totals.add(tot)
	}
	return r
}

// seriesOf returns the value of the series of the given colour.
func seriesOf(t *testing.T, color string) func(Totals) int {
	t.Helper()
	for _, s := range svgSeries {
		if s.color == color {
			return s.value
		}
	}
	t.Fatalf("a polyline of colour %s, which is no series", color)
	return nil
}

// TestSVGReadsBackThroughItsAxes draws two results on the same scales and
// reads each panel back through its axes.
func TestSVGReadsBackThroughItsAxes(t *testing.T) {
	rs := []*Result{axesResult("first", 1), axesResult("second", 3)}
	rs[1].Breaker = nil // watched in one run only
	rs[1].Latencies = nil
	var b bytes.Buffer
	if err := writeSVG(t, &b, "two runs", rs...); err != nil {
		t.Fatal(err)
	}
	es := parseSVG(t, b.Bytes())
	axes := readAxes(t, es)
	if len(axes) != len(rs) {
		t.Fatalf("%d panels with axes, want %d", len(axes), len(rs))
	}
	root := es[0]
	height := root.num(t, "height")
	if root.attr["viewBox"] != fmt.Sprintf("0 0 %s %s", root.attr["width"], root.attr["height"]) {
		t.Errorf("viewBox %q, want the image's width and height", root.attr["viewBox"])
	}
	// The highest value plotted: 3 × (3×9+5) = 96 server calls a second.
	for i, a := range axes {
		if diff := cmp.Diff([]float64{0, 20, 40, 60, 80, 100}, a.yTicks); diff != "" {
			t.Errorf("panel %d: y ticks mismatch (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff([]float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, a.tTicks); diff != "" {
			t.Errorf("panel %d: time ticks mismatch (-want +got):\n%s", i, diff)
		}
		if !near(a.y.at(0), a.bottom) || !near(a.y.at(100), a.top) {
			t.Errorf("panel %d: the y axis runs from %v to %v, its ticks from %v (0) to %v (100)", i, a.bottom, a.top, a.y.at(0), a.y.at(100))
		}
		if !near(a.x.at(0), a.left) || !near(a.x.at(10), a.right) {
			t.Errorf("panel %d: the time axis runs from %v to %v, its ticks from %v (0s) to %v (10s)", i, a.left, a.right, a.x.at(0), a.x.at(10))
		}
		if a.left <= 0 || a.right > root.num(t, "width") || a.top <= 0 || a.bottom >= height {
			t.Errorf("panel %d: plot area x [%v, %v] y [%v, %v] not inside the %vx%v image", i, a.left, a.right, a.top, a.bottom, root.attr["width"], height)
		}
		if i > 0 && a.top <= axes[i-1].bottom+svgBand {
			t.Errorf("panel %d begins at y %v, above the end of panel %d's breaker band (%v)", i, a.top, i-1, axes[i-1].bottom+svgBand)
		}
		for j, y := range a.tLabelY {
			// 12: the font size; the labels sit under the breaker band.
			if y-12 < a.bottom+svgBand {
				t.Errorf("panel %d: time tick %vs labelled at y %v, over the breaker band under the axis (%v to %v)", i, a.tTicks[j], y, a.bottom, a.bottom+svgBand)
			}
		}
		if axes[0].y.b != a.y.b || axes[0].x != a.x {
			t.Errorf("panel %d is not on panel 0's scales", i)
		}
	}

	// Each panel's elements run from its title (bold, 13) to the next
	// panel's: its texts and shading come before its grid, its series,
	// axes, breaker band and time ticks after.
	var titles []int
	for i, e := range es {
		if e.name == "text" && e.attr["font-size"] == "13" {
			titles = append(titles, i)
		}
	}
	if len(titles) != len(rs) {
		t.Fatalf("%d panel titles, want %d", len(titles), len(rs))
	}
	for p, r := range rs {
		to := len(es)
		if p+1 < len(titles) {
			to = titles[p+1]
		}
		var pre, in []svgElem
		grid := false
		for _, e := range es[titles[p]:to] {
			grid = grid || e.attr["stroke"] == "#dddddd"
			if grid {
				in = append(in, e)
			} else {
				pre = append(pre, e)
			}
		}
		checkPanel(t, p, r, axes[p], pre, in)
	}
	last := es[len(es)-1]
	lowest := 0.0 // the lowest baseline of a text above it
	for _, e := range es[:len(es)-1] {
		if e.name == "text" && e.attr["transform"] == "" {
			lowest = max(lowest, e.num(t, "y"))
		}
	}
	// The panels begin under the legend (its baseline at 48): each
	// title a line of its size (13) under it.
	for _, i := range titles {
		if y := es[i].num(t, "y"); y-13 < 48 {
			t.Errorf("panel title %q at y %v, over the legend (baseline 48)", es[i].text, y)
		}
	}
	if x := last.num(t, "x"); x <= axes[0].left || x >= axes[0].right || last.attr["text-anchor"] != "middle" {
		t.Errorf("the time axis's label at x %v (anchor %q), want it under the time axis [%v, %v]", x, last.attr["text-anchor"], axes[0].left, axes[0].right)
	}
	// 12: the font size, so that the two lines do not overlap.
	if last.text != "virtual time" || last.num(t, "y") < lowest+12 || last.num(t, "y") >= height {
		t.Errorf("the last element is %q at y %s, want the time axis's label a line under the lowest text (%v) and inside the image (%v)", last.text, last.attr["y"], lowest, height)
	}
	if bg := es[1]; bg.name != "rect" || bg.attr["fill"] != "white" || bg.attr["width"] != "100%" || bg.attr["height"] != "100%" {
		t.Errorf("the first element is %+v, want a white background over the whole image", bg)
	}
}

func checkPanel(t *testing.T, p int, r *Result, a panelAxes, pre, in []svgElem) {
	t.Helper()
	var texts []string
	shades := map[string][][2]float64{} // fill → [t0, t1] in seconds
	var shadeX0, shadeX1 float64        // the last shade's, for its label
	for _, e := range pre {
		switch e.name {
		case "text":
			texts = append(texts, e.text)
			x, y := e.num(t, "x"), e.num(t, "y")
			switch {
			case e.text == r.Name: // the title, above the plot area at its left
				if !near(x, a.left) || y >= a.top || y < a.top-svgPanelGap/2 {
					t.Errorf("panel %d: title at (%v, %v), want above the plot area's top left (%v, %v)", p, x, y, a.left, a.top)
				}
			case e.text == summary(r): // above the plot area, ending at its right
				if !near(x, a.right) || e.attr["text-anchor"] != "end" || y >= a.top || y < a.top-svgPanelGap/2 {
					t.Errorf("panel %d: summary at (%v, %v), want above the plot area's top right (%v, %v)", p, x, y, a.right, a.top)
				}
			case e.text == latencySummary(r): // inside the plot area, at its top right
				if x > a.right || x < a.right-20 || e.attr["text-anchor"] != "end" || y <= a.top || y > a.top+24 {
					t.Errorf("panel %d: latency line at (%v, %v), want inside the plot area at its top right (%v, %v)", p, x, y, a.right, a.top)
				}
			default: // a shade's label, inside it, at its top
				if x <= shadeX0 || x >= shadeX1 || y <= a.top || y > a.top+24 {
					t.Errorf("panel %d: label %q at (%v, %v), want inside the top of its shade [%v, %v]", p, e.text, x, y, shadeX0, shadeX1)
				}
			}
		case "rect":
			if e.attr["fill"] == "#e3ecf8" || e.attr["fill"] == "#eeeeee" {
				x0, w := e.num(t, "x"), e.num(t, "width")
				shadeX0, shadeX1 = x0, x0+w
				if !near(e.num(t, "y"), a.top) || !near(e.num(t, "y")+e.num(t, "height"), a.bottom) {
					t.Errorf("panel %d: a shade spans y %s + %s, not the plot area [%v, %v]", p, e.attr["y"], e.attr["height"], a.top, a.bottom)
				}
				shades[e.attr["fill"]] = append(shades[e.attr["fill"]], [2]float64{(x0 - a.x.a) / a.x.b, (x0 + w - a.x.a) / a.x.b})
			}
		}
	}
	if len(texts) < 2 || texts[0] != r.Name || texts[1] != summary(r) {
		t.Errorf("panel %d: texts %q, want its name and summary first", p, texts)
	}
	if got := slicesContains(texts, latencySummary(r)); got != (len(r.Latencies) > 0) {
		t.Errorf("panel %d: latency line shown %v, want %v (%d latencies)", p, got, len(r.Latencies) > 0, len(r.Latencies))
	}
	wantShades := map[string][][2]float64{
		"#e3ecf8": {{6, 8}, {1, 1.5}}, // the groups that come and go
		"#eeeeee": {{2, 4.5}},         // the outage
	}
	if diff := cmp.Diff(wantShades, shades, cmp.Comparer(func(x, y float64) bool { return math.Abs(x-y) < 0.01 })); diff != "" {
		t.Errorf("panel %d: shaded spans (s) mismatch (-want +got):\n%s", p, diff)
	}
	for _, want := range []string{"+7 clients", "+1 clients", "server down"} {
		if !slicesContains(texts, want) {
			t.Errorf("panel %d: no label %q in %q", p, want, texts)
		}
	}

	// The series and the load's area.
	seen := map[string]bool{}
	var band [][3]float64 // t0, t1, state
	for _, e := range in {
		switch {
		case e.name == "polyline":
			value := seriesOf(t, e.attr["stroke"])
			seen[e.attr["stroke"]] = true
			ps := points(t, e.attr["points"])
			if len(ps) != len(r.Series) {
				t.Errorf("panel %d: the %s series has %d points, want %d", p, e.attr["stroke"], len(ps), len(r.Series))
				continue
			}
			for j, pt := range ps {
				wx, wy := a.x.at(float64(j)+0.5), a.y.at(float64(value(r.Series[j])))
				if !near(pt[0], wx) || !near(pt[1], wy) {
					t.Errorf("panel %d: the %s series' point %d at (%v, %v), want (%.1f, %.1f): bucket %d's middle, %d calls/s",
						p, e.attr["stroke"], j, pt[0], pt[1], wx, wy, j, value(r.Series[j]))
				}
			}
		case e.name == "polygon":
			ps := points(t, e.attr["points"])
			want := [][2]float64{{a.x.at(0), a.y.at(0)}}
			for j, s := range r.Series {
				want = append(want, [2]float64{a.x.at(float64(j) + 0.5), a.y.at(float64(s.ServerCalls))})
			}
			want = append(want, [2]float64{a.x.at(10), a.y.at(0)})
			if diff := cmp.Diff(want, ps, cmp.Comparer(near)); diff != "" {
				t.Errorf("panel %d: the load's area mismatch (-want +got):\n%s", p, diff)
			}
		case e.name == "rect" && e.attr["fill"] != "":
			st := -1
			for s, c := range svgStateColor {
				if c == e.attr["fill"] {
					st = int(s)
				}
			}
			if st < 0 {
				t.Errorf("panel %d: a rect of fill %s in the plot", p, e.attr["fill"])
				continue
			}
			y, h := e.num(t, "y"), e.num(t, "height")
			if y <= a.bottom || y+h > a.bottom+svgBand {
				t.Errorf("panel %d: the breaker band spans y [%v, %v], want it just under the time axis (%v)", p, y, y+h, a.bottom)
			}
			x0, w := e.num(t, "x"), e.num(t, "width")
			band = append(band, [3]float64{(x0 - a.x.a) / a.x.b, (x0 + w - a.x.a) / a.x.b, float64(st)})
		}
	}
	polygons, titles, bandLabels := 0, 0, 0
	for i, e := range in {
		switch {
		case e.name == "text" && e.text == "breaker": // the band's label, left of it, at its height
			bandLabels++
			if x, y := e.num(t, "x"), e.num(t, "y"); x >= a.left || x < a.left-12 || e.attr["text-anchor"] != "end" || y <= a.bottom || y > a.bottom+svgBand+2 {
				t.Errorf("panel %d: the breaker band's label at (%v, %v), want just left of the axis (%v) at the band's height (%v to %v)", p, x, y, a.left, a.bottom, a.bottom+svgBand)
			}
		case e.name == "polygon":
			polygons++
		case e.name == "text" && e.text == "calls / s": // the y axis's title, left of its labels, at mid-height
			titles++
			// Rotated about its own anchor, so that it stays where x and y say.
			if y := e.num(t, "y"); math.Abs(y-(a.top+a.bottom)/2) > 1 || e.num(t, "x") >= a.left-30 || e.attr["transform"] != "rotate(-90 "+e.attr["x"]+" "+e.attr["y"]+")" {
				t.Errorf("panel %d: y axis title at (%s, %v) %q, want rotated, left of the labels, at mid-height %v", p, e.attr["x"], y, e.attr["transform"], (a.top+a.bottom)/2)
			}
		case e.name == "line" && e.attr["stroke"] == "#dddddd": // a grid line: across the plot, its label just left, on it
			l := in[i+1]
			y := e.num(t, "y1")
			if !near(e.num(t, "x1"), a.left) || !near(e.num(t, "x2"), a.right) || e.num(t, "y2") != y {
				t.Errorf("panel %d: grid line (%s, %s)-(%s, %s), want level across the plot area [%v, %v]", p, e.attr["x1"], e.attr["y1"], e.attr["x2"], e.attr["y2"], a.left, a.right)
			}
			if x, ly := l.num(t, "x"), l.num(t, "y"); x >= a.left || x < a.left-12 || l.attr["text-anchor"] != "end" || ly < y || ly > y+6 {
				t.Errorf("panel %d: grid label %q at (%v, %v), want just left of the axis (%v) on its line (%v)", p, l.text, x, ly, a.left, y)
			}
		}
	}
	if polygons != 1 || titles != 1 {
		t.Errorf("panel %d: %d load areas and %d y axis titles, want 1 of each", p, polygons, titles)
	}
	if want := len(r.Breaker) > 0; (bandLabels == 1) != want || bandLabels > 1 {
		t.Errorf("panel %d: %d breaker band labels, want one if the breaker is watched (%v)", p, bandLabels, want)
	}
	if len(seen) != len(svgSeries) {
		t.Errorf("panel %d: %d series drawn, want %d", p, len(seen), len(svgSeries))
	}
	var want [][3]float64
	if r.Breaker != nil {
		want = [][3]float64{{0, 2, float64(breaker.Closed)}, {2, 5, float64(breaker.Open)}, {5, 6, float64(breaker.HalfOpen)}, {6, 10, float64(breaker.Closed)}}
	}
	if diff := cmp.Diff(want, band, cmp.Comparer(func(x, y float64) bool { return math.Abs(x-y) < 0.01 })); diff != "" {
		t.Errorf("panel %d: breaker band (from s, to s, state) mismatch (-want +got):\n%s", p, diff)
	}
}

func slicesContains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// TestSVGLegend pins the legend: each series' line in its colour and
// dash, then its name, left to right; the breaker's states only when a
// result has a watched breaker.
func TestSVGLegend(t *testing.T) {
	for _, watched := range []bool{true, false} {
		r := axesResult("r", 1)
		if !watched {
			r.Breaker = nil
		}
		var b bytes.Buffer
		if err := writeSVG(t, &b, "legend", r); err != nil {
			t.Fatal(err)
		}
		es := parseSVG(t, b.Bytes())
		var got []string
		x, end := 0.0, 0.0
		for i, e := range es {
			if e.name != "text" || e.attr["y"] != "48" {
				continue
			}
			if e.num(t, "x") <= x {
				t.Errorf("legend entry %q at x %s, left of the one before (%v)", e.text, e.attr["x"], x)
			}
			mark := es[i-1]
			var start float64
			switch mark.name {
			case "line":
				start = mark.num(t, "x1")
			case "rect":
				start = mark.num(t, "x")
			}
			if start < end {
				t.Errorf("legend entry %q begins at x %v, over the one before, which ends at about %v", e.text, start, end)
			}
			x = e.num(t, "x")
			end = x + 6*float64(len(e.text)) // about 6 units a character at 12
			switch mark.name {
			case "line":
				got = append(got, e.text+" "+mark.attr["stroke"]+" "+mark.attr["stroke-dasharray"])
				if mark.num(t, "x2") >= x || mark.num(t, "x2") <= mark.num(t, "x1") || mark.num(t, "y1") != 44 || mark.num(t, "y2") != 44 {
					t.Errorf("legend line of %q not level and left of its name", e.text)
				}
			case "rect":
				got = append(got, e.text+" "+mark.attr["fill"])
				if mark.num(t, "x") >= x {
					t.Errorf("legend box of %q not left of its name", e.text)
				}
			}
		}
		want := []string{"load at the server #1f5fbf ", "successes #2a9d3a ", "refusals #e08a00 ", "failures #c62828 5,3"}
		if watched {
			want = append(want, "breaker closed #cfe8cf", "breaker open #c62828", "breaker half-open #e08a00")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("watched %v: legend mismatch (-want +got):\n%s", watched, diff)
		}
	}
}

// TestSVGDownsamplesLongRuns draws a run of 1000 buckets: each line has at
// most svgMaxBuckets points, on the same time axis, the load's area ends
// at the end of the run, and the breaker band covers the whole run.
func TestSVGDownsamplesLongRuns(t *testing.T) {
	r := &Result{Name: "long", Duration: 100 * time.Second, Bucket: 100 * time.Millisecond}
	for i := range 1000 {
		r.Series = append(r.Series, Totals{ServerCalls: 1 + i%2, Successes: 1})
		r.InFlight = append(r.InFlight, 1)
		r.Breaker = append(r.Breaker, breaker.Closed)
	}
	var b bytes.Buffer
	if err := writeSVG(t, &b, "long", r); err != nil {
		t.Fatal(err)
	}
	es := parseSVG(t, b.Bytes())
	a := readAxes(t, es)[0]
	for _, e := range es {
		switch e.name {
		case "polyline":
			ps := points(t, e.attr["points"])
			for _, pt := range ps {
				if pt[1] < a.top-0.05 || pt[1] > a.bottom+0.05 {
					t.Fatalf("a point at y %v, outside the plot area [%v, %v]", pt[1], a.top, a.bottom)
				}
			}
			// 1000 buckets of 0.1s, 5 to a merged bucket: 200 of 0.5 s.
			if len(ps) != 200 {
				t.Errorf("%d points, want 200", len(ps))
				continue
			}
			if !near(ps[0][0], a.x.at(0.25)) || !near(ps[199][0], a.x.at(99.75)) {
				t.Errorf("points from x %v to %v, want the middles of the first and last half-seconds (%v, %v)", ps[0][0], ps[199][0], a.x.at(0.25), a.x.at(99.75))
			}
			if e.attr["stroke"] == svgSeries[0].color && !near(ps[0][1], a.y.at(14)) {
				t.Errorf("the load's first point at y %v, want %v (14 calls/s: 7 calls a half-second)", ps[0][1], a.y.at(14))
			}
		case "polygon":
			ps := points(t, e.attr["points"])
			if end := ps[len(ps)-1]; !near(end[0], a.x.at(100)) || !near(end[1], a.y.at(0)) {
				t.Errorf("the load's area ends at %v, want (%v, %v)", end, a.x.at(100), a.y.at(0))
			}
		case "rect":
			if e.attr["fill"] == svgStateColor[breaker.Closed] && e.attr["y"] != "38" {
				if x0, x1 := e.num(t, "x"), e.num(t, "x")+e.num(t, "width"); !near(x0, a.x.at(0)) || !near(x1, a.x.at(100)) {
					t.Errorf("the breaker band spans x [%v, %v], want [%v, %v]", x0, x1, a.x.at(0), a.x.at(100))
				}
			}
		}
	}
}

// TestSVGShortRun draws a run of 190 ms in buckets of 20 ms: the time
// ticks are hundredths of a second, read back on one scale; every bucket
// whose middle is on the time axis has its point, the last one (190 ms) at
// the axis's end; the load's area follows the load's line, in calls a
// second; and the latency line gives the one latency and the share of
// calls that succeeded.
func TestSVGShortRun(t *testing.T) {
	r := &Result{Name: "short", Duration: 190 * time.Millisecond, Bucket: 20 * time.Millisecond,
		Latencies: []time.Duration{7 * time.Millisecond}}
	for i := range 10 {
		r.Series = append(r.Series, Totals{ServerCalls: 1 + i%2, Successes: 1})
		r.InFlight = append(r.InFlight, 1)
	}
	r.Totals = Totals{Calls: 4, Successes: 3}
	var b bytes.Buffer
	if err := writeSVG(t, &b, "short", r); err != nil {
		t.Fatal(err)
	}
	es := parseSVG(t, b.Bytes())
	a := readAxes(t, es)[0]
	if len(a.tTicks) < 5 || !near(a.tTicks[1], 0.02) {
		t.Errorf("time ticks %v, want one each 0.02 s", a.tTicks)
	}
	var load, area [][2]float64
	latency := false
	for _, e := range es {
		switch {
		case e.name == "polyline" && e.attr["stroke"] == svgSeries[0].color:
			load = points(t, e.attr["points"])
		case e.name == "polygon":
			area = points(t, e.attr["points"])
		case e.name == "text" && strings.HasPrefix(e.text, "latency"):
			latency = true
			if want := "latency p50 7ms, p99 7ms; 75.0% ok"; e.text != want {
				t.Errorf("latency line %q, want %q", e.text, want)
			}
		}
	}
	if !latency {
		t.Errorf("no latency line for a run with one latency")
	}
	var want [][2]float64
	for j, s := range r.Series {
		want = append(want, [2]float64{a.x.at(0.01 + 0.02*float64(j)), a.y.at(float64(s.ServerCalls) / 0.02)})
	}
	if diff := cmp.Diff(want, load, cmp.Comparer(near)); diff != "" {
		t.Errorf("the load's line mismatch (-want +got):\n%s", diff)
	}
	if len(load) > 0 && !near(load[len(load)-1][0], a.right) {
		t.Errorf("the last point at x %v, want the time axis's end %v", load[len(load)-1][0], a.right)
	}
	if len(area) < 2 {
		t.Fatalf("the load's area has %d points", len(area))
	}
	if diff := cmp.Diff(want, area[1:len(area)-1], cmp.Comparer(near)); diff != "" {
		t.Errorf("the load's area mismatch (-want +got):\n%s", diff)
	}
}

// TestSVGTimeTicksEndAtTheAxis draws a run of 15 s, whose ticks are 2 s
// apart: the last tick is 14 s, none past the end of the time axis.
func TestSVGTimeTicksEndAtTheAxis(t *testing.T) {
	r := &Result{Name: "15 s", Duration: 15 * time.Second, Bucket: time.Second}
	for range 15 {
		r.Series = append(r.Series, Totals{ServerCalls: 1, Successes: 1})
		r.InFlight = append(r.InFlight, 1)
	}
	var b bytes.Buffer
	if err := writeSVG(t, &b, "15 s", r); err != nil {
		t.Fatal(err)
	}
	a := readAxes(t, parseSVG(t, b.Bytes()))[0]
	if diff := cmp.Diff([]float64{0, 2, 4, 6, 8, 10, 12, 14}, a.tTicks); diff != "" {
		t.Errorf("time ticks mismatch (-want +got):\n%s", diff)
	}
}
