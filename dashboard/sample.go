package dashboard

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/telemetry"
)

// sampler is the state a Dashboard keeps between snapshots, under its mu:
// one tile per guard name, one row per pipeline, and the last snapshot
// encoded.
type sampler struct {
	seq    uint64    // snapshots taken
	slot   int64     // the Interval slot of the last snapshot
	last   time.Time // when it was taken; zero before the first
	tiles  map[string]*tile
	byName []*tile // every tile, in name order
	order  []*tile // this snapshot's tiles in display order
	spare  []*tile // the other buffer of order
	pipes  map[string]*pipe
	plist  []*pipe // this snapshot's pipelines, in name order

	kinds map[telemetry.Kind][][]telemetry.Value // per kind, the distinct value lists (by names) of this snapshot's guards
	klist []telemetry.Kind                       // the keys of kinds, sorted

	cnt      *telemetry.Counter // this snapshot's Counter (see Dashboard.events); nil: none
	failures map[string]uint64  // this snapshot's "kind.failure" counts of cnt by name, read on first use
	failRead bool               // failures was read for this snapshot

	update  []byte // the last snapshot without history (reused: see read)
	full    []byte // with history, encoded on demand (reused too)
	fullSeq uint64 // the snapshot full was encoded from
}

func (s *sampler) init() {
	s.tiles = make(map[string]*tile)
	s.kinds = make(map[telemetry.Kind][][]telemetry.Value)
	s.pipes = make(map[string]*pipe)
	s.slot = math.MinInt64
}

// tile is the state of one guard name: what the guards and the meter of
// that name said at the last snapshot, the rates derived from them, and
// the history.
type tile struct {
	name string
	seq  uint64 // the snapshot that last saw the name

	// What this snapshot read.
	gs     []telemetry.Snapshot // the name's guards, by kind (reused)
	guards uint64               // Snapshot.Refused of all the name's guards
	state  string               // the worst State of the name's guards: open, half-open, another, ""
	forced bool                 // the guard of that state has a value "forced" that is not 0
	ratio  float64              // a guard's value "failure_ratio", when one has it and window_calls > 0; else NaN
	hasErr bool                 // a guard reports failure_ratio: count failure events for errors
	meter  *meter

	// Cumulative counts at the previous snapshot, for the rates.
	base    counts
	hasBase bool

	// Derived. A NaN is unknown.
	calls, errors, refusals, errPct float64
	latency                         [3]float64 // ms; NaN: no call in the window

	// The history: rates in tenths, a ring of HistoryLen points.
	hCalls, hErrors [HistoryLen]uint32
	hNext, hLen     int
	hasCalls        bool // the history has call rates (a meter)
	hasErrors       bool // ... and error rates (a meter, or a Counter)
}

type counts struct {
	guardRefused, calls, failed, meterRefused, failures uint64
}

// pipe is the state of one pipeline.
type pipe struct {
	name, chain         string
	retryNames, fbNames []string // the policy names its events come under
	retries, fallbacks  uint64   // at the previous snapshot
	hasBase             bool
	retryRate, fbRate   float64 // NaN: unknown
	seq                 uint64
}

// read calls use with the last snapshot encoded (with history if full)
// and its number, taking a new one first if now is in a later Interval
// slot than the last. use runs under d.mu and must only copy data: the
// next snapshot is encoded into the same bytes.
func (d *Dashboard) read(now time.Time, full bool, use func(data []byte, seq uint64)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if slot := floorDiv(now.UnixNano(), int64(Interval)); slot > d.slot {
		d.slot = slot
		d.take(now)
	}
	if !full {
		use(d.update, d.seq)
		return
	}
	if d.fullSeq != d.seq || d.full == nil {
		d.full = d.appendSnapshot(slices.Grow(d.full[:0], 2*len(d.update)+64*HistoryLen*len(d.order)), true)
		d.fullSeq = d.seq
	}
	use(d.full, d.seq)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// untilNext returns the time from now to the start of the next Interval
// slot.
func untilNext(now time.Time) time.Duration {
	r := time.Duration(now.UnixNano() % int64(Interval))
	if r < 0 {
		r += Interval
	}
	return Interval - r
}

// take takes a snapshot at now: reads the registry, the meters and the
// Counter, derives the rates, extends the histories, orders the tiles and
// encodes the result.
func (d *Dashboard) take(now time.Time) {
	d.cnt, d.failRead = d.events(), false
	d.seq++
	seq := d.seq
	added := false
	see := func(t *tile) {
		if t.seq != seq {
			t.seq = seq
			clear(t.gs) // drop the last snapshot's values
			t.gs, t.meter = t.gs[:0], nil
			t.guards, t.state, t.forced, t.ratio, t.hasErr = 0, "", false, math.NaN(), false
		}
	}
	find := func(name string) *tile {
		t, ok := d.tiles[name]
		if !ok {
			t = &tile{name: name}
			d.tiles[name] = t
			d.byName = append(d.byName, t)
			added = true
		}
		return t
	}
	snaps := d.reg.Snapshots()
	for k, sigs := range d.kinds {
		clear(sigs)
		d.kinds[k] = sigs[:0]
	}
	j := 0 // the registry lists guards in name order, as byName has them: walk both
	known := d.byName
	for i := range snaps {
		s := &snaps[i]
		for j < len(known) && known[j].name < s.Name {
			j++
		}
		var t *tile
		if j < len(known) && known[j].name == s.Name {
			t = known[j]
		} else {
			t = find(s.Name)
		}
		see(t)
		t.add(s)
		d.describe(s)
	}
	for _, m := range d.meterList() {
		if m.tile == nil { // m.tile is the sampler's, under d.mu
			m.tile = find(m.name)
		}
		see(m.tile)
		m.tile.meter = m
	}
	if added {
		slices.SortFunc(d.byName, func(a, b *tile) int { return strings.Compare(a.name, b.name) })
	}

	// The rates are over the time since the last snapshot, or for the
	// first one since the dashboard was made; the counts of a tile or
	// pipeline seen for the first time are from zero (see derive).
	prev := d.last
	if prev.IsZero() {
		prev = d.made
	}
	elapsed := 0.0 // seconds since then; 0: no rates but a new tile's
	steps := 0     // history points that time spans
	if now.After(prev) {
		elapsed = now.Sub(prev).Seconds()
		steps = min(max(int(math.Round(elapsed/Interval.Seconds())), 1), HistoryLen)
	}
	d.last = now

	// Display order: open breakers, then half-open ones, then the rest,
	// each group in name order (byName's): a stable partition.
	d.order = d.order[:0]
	var groups [3]int
	for _, t := range d.byName {
		if t.seq != seq {
			continue
		}
		d.derive(t, now, elapsed, steps)
		groups[t.rank()]++
		d.order = append(d.order, t)
	}
	if groups[2] != len(d.order) {
		d.spare = slices.Grow(d.spare[:0], len(d.order))[:len(d.order)]
		next := [3]int{0, groups[0], groups[0] + groups[1]}
		for _, t := range d.order {
			r := t.rank()
			d.spare[next[r]] = t
			next[r]++
		}
		d.order, d.spare = d.spare, d.order
	}

	d.pipelines(seq, elapsed)
	d.update = d.appendSnapshot(d.update[:0], false) // read's callers copy it under d.mu
}

// add adds the snapshot of one of the name's guards to t.
func (t *tile) add(s *telemetry.Snapshot) {
	t.gs = append(t.gs, *s)
	t.guards += s.Refused
	if s.State != "" && stateRank(s.State) <= stateRank(t.state) {
		f, _ := s.Value("forced")
		t.state, t.forced = s.State, f != 0
	}
	if r, ok := s.Value("failure_ratio"); ok {
		t.hasErr = true
		if n, ok := s.Value("window_calls"); !ok || n > 0 {
			t.ratio = r
		}
	}
}

// stateRank orders states worst first: open, half-open, another state,
// none.
func stateRank(state string) int {
	switch state {
	case telemetry.StateOpen:
		return 0
	case telemetry.StateHalfOpen:
		return 1
	case "":
		return 3
	}
	return 2
}

// describe notes the values s describes, for the snapshot's "values":
// the first guard of each kind and list of value names describes them.
// Guards of one kind share their lists (the same strings), so the check
// is a few comparisons of equal strings.
func (d *Dashboard) describe(s *telemetry.Snapshot) {
	if len(s.Values) == 0 {
		return
	}
	sigs, ok := d.kinds[s.Kind]
	for _, sig := range sigs {
		if sameNames(sig, s.Values) {
			return
		}
	}
	if !ok {
		d.klist = append(d.klist, s.Kind)
		slices.Sort(d.klist)
	}
	d.kinds[s.Kind] = append(sigs, s.Values)
}

func sameNames(a, b []telemetry.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

// rank is the tile's group in the display order: 0 for a tile with an
// open guard, 1 for one with a half-open guard, 2 for the rest.
func (t *tile) rank() int {
	return min(stateRank(t.state), 2)
}

// derive computes t's rates over the elapsed seconds since the last
// snapshot (0: none) and adds steps points to its history.
func (d *Dashboard) derive(t *tile, now time.Time, elapsed float64, steps int) {
	var mr meterRead
	if t.meter != nil {
		mr = t.meter.read(now)
	}
	byCounter := t.meter == nil && t.hasErr && d.cnt != nil
	cur := counts{guardRefused: t.guards, calls: mr.calls, failed: mr.failed, meterRefused: mr.refused}
	if byCounter {
		cur.failures = d.failuresOf(t.name)
	}
	nan := math.NaN()
	t.calls, t.errors, t.refusals = nan, nan, nan
	if !t.hasBase {
		// Seen for the first time: its counts are from zero, since its
		// guards and meter were made, taken to be within the time since
		// the last snapshot (at least an Interval), so that the first
		// frame has rates.
		elapsed, steps = max(elapsed, Interval.Seconds()), max(steps, 1)
	}
	if elapsed > 0 {
		rate := func(now, then uint64) float64 {
			if now < then { // a guard replaced by one with fewer counts
				return 0
			}
			return float64(now-then) / elapsed
		}
		if len(t.gs) > 0 {
			t.refusals = rate(cur.guardRefused, t.base.guardRefused)
		} else {
			t.refusals = rate(cur.meterRefused, t.base.meterRefused)
		}
		switch {
		case t.meter != nil:
			t.calls = rate(cur.calls, t.base.calls)
			t.errors = rate(cur.failed, t.base.failed)
		case byCounter:
			t.errors = rate(cur.failures, t.base.failures)
		}
	}
	t.base, t.hasBase = cur, true

	t.errPct = nan
	t.latency = [3]float64{nan, nan, nan}
	switch {
	case t.meter != nil:
		if n := mr.winOK + mr.winFailed; n > 0 {
			t.errPct = 100 * float64(mr.winFailed) / float64(n)
		}
		if mr.hasLatency {
			for i, v := range mr.latency {
				t.latency[i] = v / 1e6
			}
		}
	case !math.IsNaN(t.ratio):
		t.errPct = 100 * t.ratio
	}

	t.hasCalls = t.meter != nil
	t.hasErrors = t.meter != nil || byCounter
	if steps > 0 && !math.IsNaN(t.refusals) {
		c, e := tenths(t.calls), tenths(t.errors)
		for range steps {
			t.hCalls[t.hNext], t.hErrors[t.hNext] = c, e
			t.hNext = (t.hNext + 1) % HistoryLen
			t.hLen = min(t.hLen+1, HistoryLen)
		}
	}
}

// failuresOf returns the count of the failure events (every "kind.failure"
// type, whichever guard's kind) of the name in this snapshot's Counter,
// reading the Counter's counts once per snapshot.
func (d *Dashboard) failuresOf(name string) uint64 {
	if !d.failRead {
		d.failRead = true
		if d.failures == nil {
			d.failures = make(map[string]uint64)
		}
		clear(d.failures)
		for _, c := range d.cnt.Counts() {
			if c.Type.What() == "failure" {
				d.failures[c.Name] += c.N
			}
		}
	}
	return d.failures[name]
}

// tenths returns v (>= 0) in tenths, rounded; 0 for NaN.
func tenths(v float64) uint32 {
	if !(v > 0) {
		return 0
	}
	return uint32(min(math.Round(v*10), math.MaxUint32))
}

// pipelines reads the registry's pipelines and the Counter's counts of
// their retries and fallbacks.
func (d *Dashboard) pipelines(seq uint64, elapsed float64) {
	d.plist = d.plist[:0]
	for _, rp := range d.reg.Pipelines() {
		p, ok := d.pipes[rp.Name]
		if !ok || p.chain != rp.Chain {
			p = &pipe{name: rp.Name, chain: rp.Chain}
			p.retryNames, p.fbNames = chainNames(rp.Name, rp.Chain)
			d.pipes[rp.Name] = p
		}
		p.seq = seq
		p.retryRate, p.fbRate = math.NaN(), math.NaN()
		if d.cnt != nil {
			var r, f uint64
			for _, n := range p.retryNames {
				r += d.cnt.Count(n, retry.EventWaiting)
			}
			for _, n := range p.fbNames {
				f += d.cnt.Count(n, resilience.EventFallbackUsed)
			}
			span := elapsed
			if !p.hasBase { // from zero, as a new tile's (see derive)
				p.retries, p.fallbacks, span = 0, 0, max(elapsed, Interval.Seconds())
			}
			if span > 0 {
				p.retryRate = float64(r-min(p.retries, r)) / span
				p.fbRate = float64(f-min(p.fallbacks, f)) / span
			}
			p.retries, p.fallbacks, p.hasBase = r, f, true
		}
		d.plist = append(d.plist, p)
	}
}

// chainNames returns the names under which the retry and fallback layers
// of a pipeline's chain report their events: a layer "retry(x)" or
// "fallback(x)" reports under x; a layer without a name ("retry",
// "fallback") is taken to report under the pipeline's name. Each name is
// listed once.
func chainNames(pipeline, chain string) (retries, fallbacks []string) {
	for layer := range strings.SplitSeq(chain, " > ") {
		for _, k := range [...]struct {
			kind string
			to   *[]string
		}{{"retry", &retries}, {"fallback", &fallbacks}} {
			name := ""
			switch {
			case layer == k.kind:
				name = pipeline
			case strings.HasPrefix(layer, k.kind+"(") && strings.HasSuffix(layer, ")"):
				name = layer[len(k.kind)+1 : len(layer)-1]
			}
			if name != "" && !slices.Contains(*k.to, name) {
				*k.to = append(*k.to, name)
			}
		}
	}
	return retries, fallbacks
}
