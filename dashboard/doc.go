// Package dashboard serves a live page of a service's guards and pipelines,
// in the spirit of Hystrix's dashboard: one tile per dependency, its
// circuit's state in colour, its calls, errors, refusals and latency, and a
// two-minute sparkline, updated every second. It uses the standard library
// only; the page (HTML, CSS and script, embedded in the binary) loads
// nothing from elsewhere and works offline.
//
// # Entry points
//
//   - New, Options, Dashboard: the http.Handler, over a telemetry.Registry,
//     which it observes: the policies given the registry as their
//     observer feed it their events and their attempts' durations
//   - Measure: a policy layer that counts and times calls for a tile, for
//     a part of a chain without a retry (whose retry.attempt events carry
//     the calls per second, error % and latency percentiles otherwise)
//   - FormatVersion, Interval, HistoryLen: the JSON snapshot format's
//     version, and its time steps
//
// Wiring, for a breaker and a pipeline (see the example of New): the
// registry is the policies' one observer, and the chain has no layer of
// the dashboard's:
//
//	reg := telemetry.NewRegistry()
//	dash := dashboard.New(reg, nil)
//	prices := breaker.New(breaker.WithName("prices"), breaker.WithObserver(reg))
//	pipeline := resilience.Then(
//		retry.New[*http.Response](retry.WithName("prices"), retry.WithObserver(reg)),
//		breaker.Policy[*http.Response](prices),
//	)
//	_ = reg.Register(prices)
//	_ = reg.RegisterPipeline("prices", pipeline)
//	http.Handle("/dashboard/", dash)
//
// # What it serves
//
// By the last element of the request path, so it can be mounted under any
// path ending in a slash:
//
//	""/index.html, app.js, style.css   the page
//	events                             text/event-stream of snapshots
//	snapshot.json                      one snapshot, with history, as application/json
//
// The page's files are sent with "Cache-Control: no-cache" and
// "X-Content-Type-Options: nosniff"; the stream and snapshot.json with
// "Cache-Control: no-store", and the stream with "X-Accel-Buffering: no"
// too, so that a proxy passes each event on as it comes.
//
// The stream starts with a "retry: 1000" line (the browser reconnects
// a second after a dropped stream), then sends an event "snapshot" (the
// current snapshot, with each tile's history) and then, at the start of
// each Interval on the dashboard's clock, an event "update" (the new
// snapshot, without history: the page extends its sparklines itself).
// Each event is framed as
//
//	event: update
//	id: 42
//	data: {"version":1,...}
//
// with the snapshot's seq as id and its JSON on one line. A stream runs on
// its request's goroutine and starts no other; it ends when the client
// goes away (the request's context is done), when a write fails, or when
// the client has kept the stream's writes waiting for 10 s in all since it
// last took one at once (within a second): a write that stays blocked for
// 10 s, or several that wait less each, as a client that reads too slowly
// makes them. A client that stops reading is seen only once the
// connection's buffers (the kernel's, on both ends) are full and writes
// wait: a stream of small snapshots may fill them only minutes after the
// client stopped reading, and until then its writes succeed.
// http.Server.Shutdown does not end
// streams by itself: give the server a BaseContext that you cancel before
// calling Shutdown, or call Close.
//
// Snapshots are taken when a client asks, at most one per Interval slot
// however many clients watch, and nothing runs while no one does. Rates
// are over the time since the previous snapshot; after a time with no
// client, the history points that time spans all get its average rate.
// The first snapshot has rates too, so that the page's first frame is
// complete: its rates are over the time since New (at least an Interval),
// of counts from zero; likewise, a tile or pipeline that appears later
// has its counts from zero over the time since the previous snapshot.
// Those counts are since each guard, Measure layer and Counter was made:
// exact when they are made with the dashboard, as at a service's start; a
// guard that counted before the dashboard was made (or registered later
// than made) adds those counts to its first rate.
//
// # A tile
//
// There is one tile per name: the guards registered in the registry under
// that name (a breaker, a bulkhead and a rate limiter of one dependency
// share a tile), the attempt durations of that name (the retry.attempt
// events of a retry of that name, or any "kind.attempt" event) and the
// Measure layers of that name. The dashboard reads
// every guard from its telemetry.Snapshot, never by its kind, so a guard
// of your own (any telemetry.Guard) gets a tile like the built-in ones.
// A tile shows:
//
//   - the worst state of its guards in colour: closed (green), open (red),
//     half-open (amber), forced open or forced closed (violet: a guard
//     whose value "forced" is not 0); tiles with an open guard come first,
//     then those with a half-open one, then the rest, each group in name
//     order;
//   - calls per second and the error % over the last 10 s (from the
//     attempt durations or Measure: each attempt is a call; without them,
//     the error % is a guard's value "failure_ratio", a breaker's over its
//     window), refusals per second (from the guards' Refused counts); a
//     rate without a source (calls without attempt durations or Measure)
//     reads "n/a", and the first frame has every other rate (see below);
//   - latency p50 / p90 / p99 over the last 10 s, of the attempts (or
//     calls through Measure) that the guards let through;
//   - a row per guard (at most three; the others in the last row's
//     tooltip): its kind, its State as it gives it (a breaker's "open", a
//     guard's own states, such as a fleet guard's), and its first three
//     values as the guard orders them, with their units, leaving out
//     durations (unit "s") that are 0; every value and its help in the
//     row's tooltip;
//   - under a guard's row, in a state other than closed, its durations
//     that are not 0 (an open breaker's "open for 12 s · cooldown left
//     18 s", from its values open_for and cooldown_left), and a keyed
//     guard's top keys, each with its state and refusals;
//   - a sparkline of the last two minutes: calls and errors per second
//     (errors from the attempts or Measure; without them, the failure
//     events, every "kind.failure" type such as breaker.failure, of a
//     name whose guard reports a failure_ratio), with its
//     scale beside it: the rate at its top (its bottom is 0).
//
// A pipeline's row shows its chain (Policy.String()), and its retries
// (retry.waiting events) and fallbacks (fallback.used events) per second
// from the events (Options.Counter, or those the registry passed on): the events of each "retry(x)" and "fallback(x)" layer
// of the chain under name x, and those of an unnamed "retry" or
// "fallback" layer under the pipeline's name.
//
// # The JSON snapshot, version 2
//
// Other tools may read the stream or snapshot.json. A snapshot is one JSON
// object; fields may be added within a version, and "version" changes
// when one changes meaning or goes away. Numbers that cannot be known
// (a rate without a source, a latency without calls, an infinite limiter
// rate) are null. Rates are rounded to 0.1, latencies to three
// significant digits; a guard's values are exact integers or have six
// significant digits.
//
//	{
//	  "version": 2,                       // FormatVersion
//	  "time": "2026-05-01T12:00:03.000Z", // when it was taken (RFC 3339, UTC, ms)
//	  "seq": 42,                          // snapshots taken so far; the SSE id
//	  "intervalSeconds": 1,               // Interval
//	  "values": {                         // what the guards' values are, by kind and value name
//	    "breaker": {"window_calls": {"unit": "{call}", "type": "gauge", "help": "Calls counted ..."}, ...},
//	    "bulkhead": {...}
//	  },
//	  "guards": [                         // the tiles, in display order: open, half-open, the rest
//	    {
//	      "name": "prices",
//	      "state": "open",                // the worst state of its guards; left out when none has one
//	      "forced": false,                // that guard is held by ForceOpen or ForceClosed; left out with state
//	      "guards": [                     // the name's guards, by kind: each its telemetry.Snapshot
//	        {"kind": "breaker", "state": "open", "refused": 172,
//	         "values": {"open_for": 12.5, "cooldown_left": 17.5, "window_calls": 0, ...}},
//	        {"kind": "bulkhead", "refused": 4, "values": {"limit": 10, "in_flight": 3, "queued": 0}},
//	        {"kind": "breaker", "refused": 9, "values": {"keys": 2, ...},  // a keyed guard
//	         "keys": {"keys": 2, "maxKeys": 8192, "open": 1, "top": [{"key": "a", "state": "open", "refused": 9}]}}
//	      ],
//	      "callsPerSec": 25,              // attempts (or calls through Measure); null without them
//	      "errorsPerSec": 0,              // failures: the attempts', or failure events; else null
//	      "refusalsPerSec": 25,           // refusals of the name's guards (or Measure's, with no guard)
//	      "errorPct": 61.2,               // over the last 10 s (see above); null without calls
//	      "latencyMs": {"p50": 1.2, "p90": 3.1, "p99": 150},  // last 10 s; null without calls
//	      "history": {                    // "snapshot" events and snapshot.json only
//	        "calls": [25, 25, 24.5],      // per second, oldest first, at most HistoryLen; null without calls
//	        "errors": [0, 0, 12]          // null without a source of errors
//	      }
//	    }
//	  ],
//	  "pipelines": [                      // in name order
//	    {"name": "prices", "chain": "fallback > retry(prices) > breaker(prices) > timeout(150ms)",
//	     "retriesPerSec": 11, "fallbacksPerSec": 25}  // null until an event is counted
//	  ]
//	}
//
// # Cost
//
// A snapshot is taken and encoded once per Interval, whoever asks, into
// bytes the dashboard reuses; each client copies them. For 5 000 breakers
// with Measure layers (BenchmarkSnapshot5000, on a loaded 2-vCPU VM) it
// takes about 10 ms of CPU, of which about 4.4 ms are the registry's
// Snapshots (its sort of the names and the breakers' own Snapshot
// methods, each allocating its Values) and about 5.6 ms the dashboard's:
// the rates, the order and 2.2 MB of JSON (each breaker's twelve values
// named). A client that connects gets the history too (4.8 MB for 5 000
// tiles). The page makes the DOM nodes of a tile once (cloned) and then
// writes only the values that changed, draws only the sparklines on
// screen and moves only the tiles whose place changed; a tile's size
// never depends on its text, so an update lays out no more than the tiles
// it changed.
//
// An attempt duration event costs the dashboard one read of the clock and
// a short lock, as a Measure layer costs two reads of the clock and a
// short lock per call, and about 9 KiB per name once it has had calls; its percentiles are
// read from a histogram of 8 buckets per octave (from 1 µs to 69 s), so
// they are within 6.25 % of the durations recorded.
package dashboard
