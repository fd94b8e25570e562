package dashboard

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Interval is the time between two snapshots: the stream sends one each
// Interval, at whole multiples of it on the dashboard's clock, and the
// rates are per second over the last one.
const Interval = time.Second

// HistoryLen is the number of points of a tile's history (its sparkline):
// one per Interval, the last two minutes.
const HistoryLen = 120

// Options configures a Dashboard. A zero field means its default; nil
// options are all defaults.
type Options struct {
	// Counter is a telemetry.Counter that the policies report their
	// events to (through their WithObserver options, e.g. in a
	// telemetry.Multi with a Slog). The dashboard reads from it a
	// pipeline's retries (retry.waiting) and fallbacks (fallback.used)
	// and, for a guard with a failure ratio and no attempt durations, its
	// failures (every "kind.failure" event, such as breaker.failure). nil
	// (the default): the dashboard counts the events that the registry
	// passes on (the policies given the registry as their observer);
	// until it has received one, those numbers are unknown (null in the
	// JSON, "n/a" on the page).
	Counter *telemetry.Counter
	// Clock is the time source of the snapshots, of the stream's ticks, of
	// the Measure layers' timings and of the window the attempt durations
	// fall in. nil means clock.Real().
	Clock clock.Clock
}

// Dashboard is an http.Handler that serves a live page of the guards and
// pipelines of a telemetry.Registry: one tile per guard name, with the
// breaker's state in colour, calls, errors and refusals per second, the
// latency percentiles, the bulkhead's and the rate limiter's gauges and
// a two-minute sparkline; one row per pipeline with its chain, retries
// and fallbacks per second. See the package documentation for what it
// serves and the JSON it sends.
//
// Snapshots are taken when a client asks for one, at most once per
// Interval however many clients are connected; nothing runs while no one
// watches. A Dashboard is safe for simultaneous use by multiple
// goroutines.
type Dashboard struct {
	reg     *telemetry.Registry
	counter *telemetry.Counter // Options.Counter
	own     telemetry.Counter  // the events the registry passed on, without Options.Counter
	heard   atomic.Bool        // own has counted an event
	clock   clock.Clock
	made    time.Time // when New made it: the start of the first snapshot's rates

	mmu    sync.Mutex
	meters map[string]*meter
	mlist  []*meter // in the order they were made

	mu sync.Mutex // guards the sampler's state below
	sampler

	writeTimeout time.Duration    // a stream's write budget: writeTimeout
	wallNow      func() time.Time // the clock of connections' write deadlines: time.Now
}

// New returns a Dashboard of the guards and pipelines registered in reg,
// configured by o (nil: the defaults), and adds it to reg's observers
// (telemetry.Registry.AddObserver), where it stays for reg's life: the
// policies given reg as their observer feed it their events (see
// Options.Counter) and the durations of their attempts (a retry's
// retry.attempt events: each attempt counts as a call of the tile of the
// retry's name, with its outcome and latency, as through a Measure
// layer). Guards and pipelines registered later show from the next
// snapshot on. New panics if reg is nil.
func New(reg *telemetry.Registry, o *Options) *Dashboard {
	if reg == nil {
		panic("dashboard: New registry must not be nil")
	}
	var opt Options
	if o != nil {
		opt = *o
	}
	if opt.Clock == nil {
		opt.Clock = clock.Real()
	}
	d := &Dashboard{
		reg:     reg,
		counter: opt.Counter,
		clock:   opt.Clock,
		made:    opt.Clock.Now(),
		meters:  make(map[string]*meter),

		writeTimeout: writeTimeout,
		wallNow:      time.Now,
	}
	d.sampler.init()
	reg.AddObserver((*observer)(d))
	return d
}

// events returns the Counter the dashboard reads events from:
// Options.Counter, else its own once the registry has passed it an
// event, else nil.
func (d *Dashboard) events() *telemetry.Counter {
	switch {
	case d.counter != nil:
		return d.counter
	case d.heard.Load():
		return &d.own
	}
	return nil
}

// observer is a Dashboard as the observer of its registry (New adds it):
// it counts the events in its own Counter (without Options.Counter) and
// records the attempt durations (telemetry.WhatAttempt events) in the
// tile of their name, as a Measure layer does.
type observer Dashboard

// Observe counts e and, if it is an attempt's duration, records it. It
// costs a lock-free count, and for an attempt one reading of the clock
// and a short lock of the name's counters; no allocation once the name
// and the event type have been seen.
func (o *observer) Observe(e telemetry.Event) {
	d := (*Dashboard)(o)
	if d.counter == nil {
		d.own.Observe(e)
		if !d.heard.Load() {
			d.heard.Store(true)
		}
	}
	if e.Name == "" || e.Type.What() != telemetry.WhatAttempt {
		return
	}
	end := d.clock.Now()
	d.meter(e.Name).record(end, e.Elapsed, classifyErr(e.Err))
}

// meter returns the meter of name, made on first use.
func (d *Dashboard) meter(name string) *meter {
	d.mmu.Lock()
	defer d.mmu.Unlock()
	m, ok := d.meters[name]
	if !ok {
		m = &meter{name: name}
		d.meters[name] = m
		d.mlist = append(d.mlist, m)
	}
	return m
}

// meterList returns the meters made so far.
func (d *Dashboard) meterList() []*meter {
	d.mmu.Lock()
	defer d.mmu.Unlock()
	return slices.Clip(d.mlist)
}

// ServeHTTP serves, by the last element of the request's path: the page
// ("" or "index.html"), its script and style ("app.js", "style.css"), the
// stream of snapshots ("events", text/event-stream) and one snapshot
// ("snapshot.json"); 404 for anything else, 405 for a method other than
// GET or HEAD. So a Dashboard can be mounted under any path that ends in
// a slash, with or without http.StripPrefix:
//
//	mux.Handle("/dashboard/", dash)
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "dashboard: method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch name := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]; name {
	case "", "index.html", "app.js", "style.css":
		serveAsset(w, r, name)
	case "events":
		d.serveEvents(w, r)
	case "snapshot.json":
		d.serveSnapshot(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (d *Dashboard) serveSnapshot(w http.ResponseWriter, r *http.Request) {
	var b []byte
	d.read(d.clock.Now(), true, func(data []byte, _ uint64) { b = append([]byte(nil), data...) })
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(b)
}
