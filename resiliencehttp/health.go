package resiliencehttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/f0b5b96b/resilience/telemetry"
)

// Health returns an http.Handler for a health check (a load balancer's or
// an orchestrator's readiness probe, an operator's curl) that answers from
// reg: 200 OK when the service can serve, 503 Service Unavailable when it
// cannot, with a JSON body listing the state of every registered guard.
//
// The service cannot serve when a critical guard is open: one named by
// [WithCritical], registered in reg, with states, whose state is open
// (telemetry.Snapshot.Open; for a breaker, forced open included). Health
// reads no guard by its kind: a guard of your own whose snapshot has a
// State counts as a breaker does. By default no guard is critical, and
// Health always answers 200 with the body: an instance whose dependency
// is down is usually no better or worse than its peers (they share the
// dependency), and a probe that fails on every open breaker takes the
// whole fleet out of service for one dependency's outage. Name as
// critical only the dependencies without which the instance can answer
// nothing useful. A half-open breaker is not open: it is testing the
// dependency with trial calls, and those need the instance's traffic (a
// 503 for half-open would keep an instance out of service, so without the
// calls that could close its breaker). A critical name under which no
// guard with states is registered in reg when a request comes is
// unhealthy too (503, listed under "missing"): a check that cannot see
// what it was told to check does not say "healthy", so a typo (or a name
// given only to a bulkhead, which is never open) shows at the first
// probe. Names can be registered after Health is built; each request
// reads reg anew.
//
// Health answers GET and HEAD (HEAD without the body); other methods get
// 405 Method Not Allowed. Responses are application/json and not cached
// (Cache-Control: no-store). The body is one object:
//
//	{
//	  "status": "unavailable",            // "ok" with 200, "unavailable" with 503
//	  "open": ["payments"],               // critical guards open now; left out when none
//	  "missing": ["ledger"],              // critical names not registered; left out when none
//	  "guards": [                         // every registered guard, as Registry.Snapshots orders them
//	    {"kind": "breaker", "name": "payments", "refused": 12, "state": "open", "critical": true,
//	     "values": {"forced": 0, "generation": 3, "window_calls": 0, ..., "window_refused": 12, ...}},
//	    {"kind": "bulkhead", "name": "db", "refused": 0,
//	     "values": {"limit": 10, "in_flight": 2, "queued": 0}},
//	    {"kind": "breaker", "name": "hosts", "refused": 9,
//	     "values": {"keys": 2, ...},
//	     "keys": {"keys": 2, "max_keys": 8192, "open": 1,
//	              "top": [{"key": "a.example", "state": "open", "refused": 9}]}}
//	  ],
//	  "durations": [                      // the calls and attempts by name; left out when none
//	    {"name": "payments", "calls": 120, "call_mean_seconds": 0.0123,
//	     "attempts": 131, "attempt_mean_seconds": 0.0107}
//	  ]
//	}
//
// Each guard is its telemetry.Snapshot: "refused" is Snapshot.Refused
// (refusals since the guard was made); "state" is left out for guards
// without states, "critical" for guards not critical; "reason" is
// Snapshot.Reason, why the guard is in its state, left out when the guard
// gives none (a fleet-wide guard deciding locally gives the error of its
// last round trip to Redis); "values" are
// Snapshot.Values, name to number, in the guard's order (their units and
// help are the guard's documentation's); "keys" is a keyed guard's
// Snapshot.Keys. A value that JSON cannot spell (NaN, ±Inf) makes the
// answer 500.
//
// "durations" are the durations of the calls and attempts that reg, as
// the policies' observer, passed on (the duration events, such as a
// retry's retry.call and retry.attempt: see telemetry.WhatCall), by the
// events' name, since Health was called: how many, and their mean.
// Health adds itself to reg's observers (telemetry.Registry.AddObserver)
// for that, and stays there for reg's life: build it once. The durations
// are information only: they never make the answer 503.
//
// Each request takes one snapshot of each guard (Registry.Snapshots), so
// a probe costs what polling the registry costs. Health panics if reg is
// nil or an option is nil. The handler is safe for simultaneous use.
func Health(reg *telemetry.Registry, opts ...HealthOption) http.Handler {
	if reg == nil {
		panic("resiliencehttp: Health registry must not be nil")
	}
	h := &health{reg: reg, durs: new(durations)}
	reg.AddObserver(h.durs)
	for _, o := range opts {
		if o == nil {
			panic("resiliencehttp: Health option must not be nil")
		}
		o.applyHealth(h)
	}
	return h
}

// HealthOption configures [Health]: [WithCritical].
type HealthOption interface{ applyHealth(*health) }

type healthOption func(*health)

func (o healthOption) applyHealth(h *health) { o(h) }

// WithCritical names the guards whose opening makes [Health] answer 503:
// the registered guards of these names that have states (breakers, and
// guards of your own whose snapshots have a State). Several WithCritical
// options add up. By default no guard is critical (see Health for why). WithCritical panics if a name is "".
func WithCritical(names ...string) HealthOption {
	for _, n := range names {
		if n == "" {
			panic("resiliencehttp: WithCritical name must not be empty")
		}
	}
	names = slices.Clone(names)
	return healthOption(func(h *health) {
		for _, n := range names {
			if !slices.Contains(h.critical, n) {
				h.critical = append(h.critical, n)
			}
		}
	})
}

type health struct {
	reg      *telemetry.Registry
	critical []string   // in the order given
	durs     *durations // what the registry passed on: the calls' and attempts' durations
}

// healthBody is the JSON body of a Health answer.
type healthBody struct {
	Status  string        `json:"status"`
	Open    []string      `json:"open,omitempty"`
	Missing []string      `json:"missing,omitempty"`
	Guards  []healthGuard `json:"guards"`
	// Durations are the calls and attempts by name; left out when none.
	Durations []healthDurations `json:"durations,omitempty"`
}

type healthGuard struct {
	Kind     telemetry.Kind        `json:"kind"`
	Name     string                `json:"name"`
	Refused  uint64                `json:"refused"`
	State    string                `json:"state,omitempty"`
	Reason   string                `json:"reason,omitempty"`
	Critical bool                  `json:"critical,omitempty"`
	Values   healthValues          `json:"values,omitempty"`
	Keys     *telemetry.KeySummary `json:"keys,omitempty"`
}

func (h *health) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "resiliencehttp: health: method "+r.Method+" not allowed", http.StatusMethodNotAllowed)
		return
	}
	body := h.check()
	code := http.StatusOK
	if body.Status != "ok" {
		code = http.StatusServiceUnavailable
	}
	data, err := json.Marshal(body)
	if err != nil { // a float that JSON cannot spell (NaN, ±Inf)
		http.Error(w, "resiliencehttp: health: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		_, _ = w.Write(append(data, '\n'))
	}
}

// check reads the registry once and decides.
func (h *health) check() healthBody {
	body := healthBody{Status: "ok", Guards: []healthGuard{}}
	seen := make([]bool, len(h.critical))
	for _, s := range h.reg.Snapshots() {
		g := healthGuard{Kind: s.Kind, Name: s.Name, Refused: s.Refused, State: s.State, Reason: s.Reason, Keys: s.Keys}
		g.Values = s.Values
		if i := slices.Index(h.critical, s.Name); i >= 0 && s.State != "" {
			g.Critical, seen[i] = true, true
			if s.Open() && !slices.Contains(body.Open, s.Name) {
				body.Open = append(body.Open, s.Name)
			}
		}
		body.Guards = append(body.Guards, g)
	}
	for i, ok := range seen {
		if !ok {
			body.Missing = append(body.Missing, h.critical[i])
		}
	}
	if len(body.Open) > 0 || len(body.Missing) > 0 {
		body.Status = "unavailable"
	}
	body.Durations = h.durs.list()
	return body
}

// healthValues are a guard's values as one JSON object, name to number,
// in the guard's order.
type healthValues []telemetry.Value

func (vs healthValues) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		name, err := json.Marshal(v.Name)
		if err != nil {
			return nil, err
		}
		num, err := json.Marshal(v.Value)
		if err != nil { // NaN, ±Inf
			return nil, fmt.Errorf("value %s: %w", v.Name, err)
		}
		b = append(append(append(b, name...), ':'), num...)
	}
	return append(b, '}'), nil
}
