package adaptive

import (
	"math"
	"time"
)

// maybeEnd ends the current window at now if it has lasted long enough
// and seen enough calls end, or has lasted maxWindow. Any call that ends
// or is refused may end the window; the one that does takes winMu, the
// others go on.
func (l *Limiter) maybeEnd(now int64) {
	if now < l.winEnd.Load() {
		return
	}
	if l.winOK.Load()+l.winDrops.Load() < l.minSamples && now-l.winStart.Load() < l.maxWindow {
		return
	}
	if !l.winMu.TryLock() {
		return // another call ends it
	}
	defer l.winMu.Unlock()
	if now < l.winEnd.Load() { // it ended while this call waited
		return
	}
	start := l.winStart.Load()
	if l.winOK.Load()+l.winDrops.Load() < l.minSamples && now-start < l.maxWindow {
		return
	}
	l.endLocked(now, start)
}

// endLocked ends the window that began at start: it hands what the window
// measured to the algorithm, applies the guardrails, sets the new limit
// and starts the next window. l.winMu must be held.
func (l *Limiter) endLocked(now, start int64) {
	ok := l.winOK.Swap(0)
	n := l.winCount.Swap(0)
	sum := l.winSum.Swap(0)
	drops := l.winDrops.Swap(0)
	ignored := l.winIgnored.Swap(0)
	rejected := l.winRejected.Swap(0)
	admitted := l.winAdmitted.Swap(0)
	l.every.Store(max(admitted/sampleFirst, 1))
	held := int64(heldOf(l.state.Load()))
	maxIn := l.winMaxIn.Swap(held)
	elapsed := now - start

	w := Window{
		Successes:   int(ok),
		Drops:       int(drops),
		MaxInFlight: int(max(maxIn, held)),
		Refused:     int(rejected),
		Duration:    time.Duration(elapsed),
	}
	if n > 0 {
		w.Latency = time.Duration(sum / n)
		// A window offers the baseline its latency (bounded by recent),
		// or the windows' latency averaged over about baselineSmoothing
		// if that is higher: the lowest of short windows' own means
		// would be their noise's low tail, against which an ordinary
		// window reads as queueing.
		k := min(float64(elapsed)/float64(baselineSmoothing), 1)
		if l.smoothed == 0 {
			k = 1
		}
		l.smoothed += k * (float64(w.Latency) - l.smoothed)
		c := max(l.recent.candidate(now, int64(w.Latency), l.floor.min(now)), int64(l.smoothed))
		if l.maxLatency == 0 || c <= l.maxLatency {
			l.floor.add(now, c)
		}
	}
	w.Baseline = time.Duration(l.floor.min(now))
	// Nothing ended for a whole long window while calls were in flight
	// all along: the dependency is stalled. Calls that ended uncounted
	// (cancelled, refused by an inner guard) ended all the same.
	stalled := ok == 0 && drops == 0 && ignored == 0 && l.startHeld > 0 && elapsed >= l.maxWindow

	cur := l.limit
	next := l.alg.Next(cur, w)
	if math.IsNaN(next) {
		next = cur
	}
	if float64(w.MaxInFlight) < cur/2 {
		next = min(next, cur) // demand, not the dependency, set this window
	}
	if ok > 0 && n == 0 {
		next = min(next, cur) // no call was timed: nothing says the dependency has room
	}
	if l.maxLatency > 0 && int64(w.Latency) > l.maxLatency {
		next = min(next, cur*0.9)
	}
	if stalled {
		next = min(next, cur*0.5)
	}
	next = min(max(next, float64(l.cfg.Min)), float64(l.cfg.Max))
	l.limit = next
	l.latency.Store(int64(w.Latency))
	l.baseline.Store(int64(w.Baseline))
	l.startHeld = held
	l.winStart.Store(now)
	l.winEnd.Store(now + l.window)
	l.setLimit(uint64(next))
}

// A run of windows lowers the baseline by about 5% at most (from b to
// b/baselineStep) until it has lasted confirmWindows windows and
// confirmTime × max(Window, 1s).
const (
	baselineSmoothing = time.Second
	baselineStep      = 1.05
	confirmWindows    = 3
	confirmTime       = 2
	confirmUnit       = time.Second
)

// recent follows the current run of windows whose latency was below the
// baseline before the run, divided by baselineStep, to bound how far the
// baseline falls until the lower latency has held for a while. The zero
// recent has no run; span must be set to the confirmation time.
type recent struct {
	span  int64 // how long a run must last to confirm its latency, ns
	ref   int64 // the baseline when the run began; 0: no run
	since int64 // when its first window ended
	n     int   // its windows
	high  int64 // its highest latency
}

// candidate records a window's latency lat, ended at now, and returns the
// latency it offers the floor as a candidate baseline, given the baseline
// b now (0: none yet). A window no lower than b/baselineStep (the
// baseline before the run, in a run) offers its latency and ends the
// run: the floor follows the ordinary ups and downs of latency at once.
// A lower one offers that bound, the same for the whole run, until the
// run has lasted confirmWindows windows and the span: then it offers the
// highest latency of the run, which has held for that long. So a burst of
// calls answered far faster than the dependency can (from a cache, at
// once, with a clock's resolution) lowers the baseline by about 5%, not
// to its own latency, however many windows it covers, and the windows
// after it are not read as queueing; a dependency that is faster for
// good is followed once the run confirms it.
func (r *recent) candidate(now, lat, b int64) int64 {
	ref := b
	if r.ref > 0 {
		ref = r.ref
	}
	bound := int64(float64(ref) / baselineStep)
	if b == 0 || lat >= bound {
		r.ref = 0
		return lat
	}
	if r.ref == 0 {
		r.ref, r.since, r.n, r.high = ref, now, 0, 0
	}
	r.n++
	r.high = max(r.high, lat)
	if r.n >= confirmWindows && now-r.since >= r.span {
		return r.high
	}
	return bound
}

// floorSlots is the number of time slots of a floor's memory.
const floorSlots = 8

// floor keeps the lowest window latency of the last BaselineMemory: the
// lowest of each of floorSlots slots of BaselineMemory/floorSlots, so
// what it remembers spans between 7/8 of BaselineMemory and all of it.
// With width 0 it remembers for ever. The zero floor with width 0 is
// empty.
type floor struct {
	width int64 // ns per slot; 0: for ever
	ever  int64 // the lowest latency seen, when width is 0
	slots [floorSlots]struct{ epoch, min int64 }
}

// add records a window latency lat (> 0) at now.
func (f *floor) add(now, lat int64) {
	if lat <= 0 {
		return
	}
	if f.width == 0 {
		if f.ever == 0 || lat < f.ever {
			f.ever = lat
		}
		return
	}
	e := now / f.width
	s := &f.slots[e%floorSlots]
	if s.epoch != e || s.min == 0 || lat < s.min {
		s.epoch, s.min = e, lat
	}
}

// min returns the lowest latency remembered at now, or 0.
func (f *floor) min(now int64) int64 {
	if f.width == 0 {
		return f.ever
	}
	e := now / f.width
	m := int64(0)
	for _, s := range f.slots {
		if s.min > 0 && s.epoch > e-floorSlots && (m == 0 || s.min < m) {
			m = s.min
		}
	}
	return m
}
