package sim

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience/policy/breaker"
)

// The plot's geometry, in SVG user units (pixels).
const (
	svgWidth     = 960
	svgLeft      = 64  // room for the y axis labels
	svgRight     = 24  //
	svgTop       = 64  // title and legend
	svgPanel     = 170 // height of a panel's plot area
	svgBand      = 10  // height of the breaker state band under it
	svgPanelGap  = 58  // panel title above, axis labels below
	svgBottom    = 36  // the time axis label
	svgPlotWidth = svgWidth - svgLeft - svgRight
)

// The series' colours and names, in legend order.
var svgSeries = []struct {
	name, color string
	dash        string
	value       func(Totals) int
}{
	{"load at the server", "#1f5fbf", "", func(t Totals) int { return t.ServerCalls }},
	{"successes", "#2a9d3a", "", func(t Totals) int { return t.Successes }},
	{"refusals", "#e08a00", "", func(t Totals) int { return t.Refused }},
	{"failures", "#c62828", "5,3", func(t Totals) int { return t.Failures }},
}

var svgStateColor = map[breaker.State]string{
	breaker.Closed:   "#cfe8cf",
	breaker.Open:     "#c62828",
	breaker.HalfOpen: "#e08a00",
}

// WriteSVG draws results as an SVG image, one panel per result, one above
// the other on the same scales: per second of virtual time, the calls
// arriving at the server (load), and the client calls that succeeded, were
// refused by a guard, or failed; under each panel, the state of the
// watched breaker (green closed, red open, orange half-open), if any; at
// the top right of each panel, the callers' latency (p50, p99) and the
// share of calls that succeeded; the
// server's outages shaded grey, and groups of clients that come and go
// (load spikes) shaded blue. title heads the image. The results should come
// from one scenario (as [Compare] returns them): the time axis is the first
// result's Duration. WriteSVG uses only the standard library and returns
// the first error of w.
func WriteSVG(w io.Writer, title string, results ...*Result) error {
	bw := bufio.NewWriter(w)
	p := &svgWriter{w: bw}
	p.plot(title, results)
	if p.err != nil {
		return p.err
	}
	return bw.Flush()
}

type svgWriter struct {
	w   *bufio.Writer
	err error
}

func (p *svgWriter) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *svgWriter) plot(title string, results []*Result) {
	height := svgTop + len(results)*(svgPanel+svgBand+svgPanelGap) + svgBottom
	p.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="12">`+"\n",
		svgWidth, height, svgWidth, height)
	p.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	p.printf(`<text x="%d" y="24" font-size="16" font-weight="bold">%s</text>`+"\n", svgLeft, html.EscapeString(title))
	// Legend.
	x := svgLeft
	for _, s := range svgSeries {
		p.printf(`<line x1="%d" y1="44" x2="%d" y2="44" stroke="%s" stroke-width="2.5" stroke-dasharray="%s"/>`, x, x+22, s.color, s.dash)
		p.printf(`<text x="%d" y="48">%s</text>`+"\n", x+28, s.name)
		x += 40 + 7*len(s.name)
	}
	watched := false
	for _, r := range results {
		watched = watched || r.Breaker != nil
	}
	for _, st := range []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen} {
		if !watched {
			break
		}
		p.printf(`<rect x="%d" y="38" width="14" height="10" fill="%s"/>`, x, svgStateColor[st])
		p.printf(`<text x="%d" y="48">breaker %v</text>`+"\n", x+18, st)
		x += 34 + 7*len("breaker "+st.String())
	}
	if len(results) == 0 {
		p.printf("</svg>\n")
		return
	}

	dur := results[0].Duration
	coarse := make([]*Result, len(results))
	for i, r := range results {
		coarse[i] = downsample(r, svgMaxBuckets)
	}
	results = coarse
	ymax := 1.0
	for _, r := range results {
		for _, b := range r.Series {
			for _, s := range svgSeries {
				ymax = max(ymax, float64(s.value(b))/r.Bucket.Seconds())
			}
		}
	}
	ystep := niceStep(ymax / 4)
	ymax = math.Ceil(ymax/ystep) * ystep

	for i, r := range results {
		top := svgTop + i*(svgPanel+svgBand+svgPanelGap) + 22
		p.panel(r, top, dur, ymax, ystep)
	}
	p.printf(`<text x="%d" y="%d" text-anchor="middle" fill="#555555">virtual time</text>`+"\n", svgLeft+svgPlotWidth/2, height-10)
	p.printf("</svg>\n")
}

// panel draws one result with its plot area's top at y = top.
func (p *svgWriter) panel(r *Result, top int, dur time.Duration, ymax, ystep float64) {
	xOf := func(t time.Duration) float64 { return svgLeft + float64(svgPlotWidth)*t.Seconds()/dur.Seconds() }
	yOf := func(v float64) float64 { return float64(top) + svgPanel - svgPanel*v/ymax }
	bottom := top + svgPanel

	p.printf(`<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>`, svgLeft, top-8, html.EscapeString(r.Name))
	p.printf(`<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", svgWidth-svgRight, top-8, html.EscapeString(summary(r)))
	if len(r.Latencies) > 0 {
		// The callers' latency, inside the panel, at its top right.
		p.printf(`<text x="%d" y="%d" text-anchor="end" fill="#555555" font-size="11">%s</text>`+"\n", svgWidth-svgRight-4, top+14,
			html.EscapeString(latencySummary(r)))
	}
	// Groups of clients that come and go (load spikes), shaded.
	for _, g := range r.Clients {
		if g.Start == 0 || g.Stop == 0 || g.Stop >= dur {
			continue
		}
		x0, x1 := xOf(g.Start), xOf(g.Stop)
		p.printf(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#e3ecf8"/>`, x0, top, x1-x0, svgPanel)
		p.printf(`<text x="%.1f" y="%d" fill="#5577aa" font-size="11">+%d clients</text>`+"\n", x0+4, top+14, max(g.N, 1))
	}
	// Outages, shaded.
	for _, o := range r.Outages {
		x0, x1 := xOf(min(o.Start, dur)), xOf(min(o.End, dur))
		p.printf(`<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#eeeeee"/>`, x0, top, x1-x0, svgPanel)
		p.printf(`<text x="%.1f" y="%d" fill="#888888" font-size="11">server %v</text>`+"\n", x0+4, top+14, o.Mode)
	}
	// Grid and y axis.
	for v := 0.0; v <= ymax+ystep/2; v += ystep {
		y := yOf(v)
		p.printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#dddddd"/>`, svgLeft, y, svgWidth-svgRight, y)
		p.printf(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", svgLeft-6, y+4, strconv.FormatFloat(v, 'f', -1, 64))
	}
	p.printf(`<text x="14" y="%d" transform="rotate(-90 14 %d)" text-anchor="middle" fill="#555555">calls / s</text>`+"\n", top+svgPanel/2, top+svgPanel/2)
	// The load, also as an area, so that it shows where a line covers it.
	{
		var b strings.Builder
		fmt.Fprintf(&b, "%.1f,%.1f ", xOf(0), yOf(0))
		for j, t := range r.Series {
			at := time.Duration(j)*r.Bucket + r.Bucket/2
			if at > dur {
				break
			}
			fmt.Fprintf(&b, "%.1f,%.1f ", xOf(at), yOf(float64(t.ServerCalls)/r.Bucket.Seconds()))
		}
		fmt.Fprintf(&b, "%.1f,%.1f", xOf(min(time.Duration(len(r.Series))*r.Bucket, dur)), yOf(0))
		p.printf(`<polygon fill="#1f5fbf" fill-opacity="0.12" stroke="none" points="%s"/>`+"\n", b.String())
	}
	// Series.
	for _, s := range svgSeries {
		var b strings.Builder
		for j, t := range r.Series {
			at := time.Duration(j)*r.Bucket + r.Bucket/2
			if at > dur {
				break
			}
			fmt.Fprintf(&b, "%.1f,%.1f ", xOf(at), yOf(float64(s.value(t))/r.Bucket.Seconds()))
		}
		p.printf(`<polyline fill="none" stroke="%s" stroke-width="1.6" stroke-dasharray="%s" stroke-linejoin="round" points="%s"/>`+"\n",
			s.color, s.dash, strings.TrimSpace(b.String()))
	}
	// Axes.
	p.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`, svgLeft, top, svgLeft, bottom)
	p.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", svgLeft, bottom, svgWidth-svgRight, bottom)
	// Breaker band.
	if r.Breaker != nil {
		// One rectangle per run of buckets in the same state.
		for j := 0; j < len(r.Breaker); {
			k := j + 1
			for k < len(r.Breaker) && r.Breaker[k] == r.Breaker[j] {
				k++
			}
			x0, x1 := xOf(time.Duration(j)*r.Bucket), xOf(min(time.Duration(k)*r.Bucket, dur))
			p.printf(`<rect x="%.1f" y="%d" width="%.2f" height="%d" fill="%s"/>`, x0, bottom+2, x1-x0, svgBand-2, svgStateColor[r.Breaker[j]])
			j = k
		}
		p.printf(`<text x="%d" y="%d" text-anchor="end" font-size="10" fill="#555555">breaker</text>`+"\n", svgLeft-6, bottom+svgBand)
	}
	// Time axis.
	// The last tick at or before the axis's end: the slack only absorbs
	// the rounding of the sum of steps.
	tstep := niceStep(dur.Seconds() / 10)
	for s := 0.0; s <= dur.Seconds()+tstep/1e6; s += tstep {
		x := xOf(time.Duration(s * float64(time.Second)))
		p.printf(`<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`, x, bottom, x, bottom+4)
		p.printf(`<text x="%.1f" y="%d" text-anchor="middle">%ss</text>`+"\n", x, bottom+svgBand+14, strconv.FormatFloat(s, 'f', -1, 64))
	}
}

// svgMaxBuckets is the most buckets a panel draws: finer series are
// merged, so that a line's points are a few pixels apart.
const svgMaxBuckets = 240

// downsample returns r with its series merged into buckets k times as wide,
// k the smallest that leaves at most n buckets; a merged bucket's breaker
// state is the most severe of its buckets' (open, then half-open). It
// returns r itself when its series are short enough.
func downsample(r *Result, n int) *Result {
	k := (len(r.Series) + n - 1) / n
	if k <= 1 {
		return r
	}
	c := *r
	c.Bucket = r.Bucket * time.Duration(k)
	m := (len(r.Series) + k - 1) / k
	c.Series, c.InFlight = make([]Totals, m), make([]int, m)
	if r.Breaker != nil {
		c.Breaker = make([]breaker.State, m)
	}
	for i, t := range r.Series {
		c.Series[i/k].add(t)
		c.InFlight[i/k] = max(c.InFlight[i/k], r.InFlight[i])
		if r.Breaker != nil && severity(r.Breaker[i]) > severity(c.Breaker[i/k]) {
			c.Breaker[i/k] = r.Breaker[i]
		}
	}
	// The last merged bucket may be short: scale it as a full one.
	if rest := len(r.Series) % k; rest != 0 {
		last := &c.Series[m-1]
		scale := func(v *int) { *v = *v * k / rest }
		for _, v := range []*int{&last.Calls, &last.Successes, &last.Refused, &last.Failures, &last.ServerCalls, &last.Overloaded, &last.Down, &last.Conflicts} {
			scale(v)
		}
	}
	return &c
}

// severity orders breaker states for downsample: closed, half-open, open.
func severity(s breaker.State) int {
	switch s {
	case breaker.Open:
		return 2
	case breaker.HalfOpen:
		return 1
	}
	return 0
}

// summary is the one-line summary of r at the top right of its panel.
func summary(r *Result) string {
	return fmt.Sprintf("calls %d: ok %d, refused %d, failed %d; at the server %d (×%.2f)",
		r.Calls, r.Successes, r.Refused, r.Failures, r.ServerCalls, r.Amplification())
}

// latencySummary is the line of r's callers' latency and success rate.
func latencySummary(r *Result) string {
	return fmt.Sprintf("latency p50 %v, p99 %v; %.1f%% ok", r.Latency(0.5).Round(time.Millisecond), r.Latency(0.99).Round(time.Millisecond),
		100*r.SuccessRate())
}

// niceStep returns a round step (1, 2 or 5 times a power of ten) near x.
func niceStep(x float64) float64 {
	if x <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	switch f := x / p; {
	case f < 1.5:
		return p
	case f < 3.5:
		return 2 * p
	case f < 7.5:
		return 5 * p
	}
	return 10 * p
}
