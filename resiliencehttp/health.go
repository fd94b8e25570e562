package resiliencehttp

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/f0b5b96b/resilience/telemetry"
)

// Health returns an http.Handler for a health check (a load balancer's or
// an orchestrator's readiness probe, an operator's curl) that answers from
// reg: 200 OK when the service can serve, 503 Service Unavailable when it
// cannot, with a JSON body listing the state of every registered guard.
//
// The service cannot serve when a critical breaker is open: one named by
// [WithCritical], registered in reg, whose state is open (forced open
// included). By default no breaker is critical, and Health always answers
// 200 with the body: an instance whose dependency is down is usually no
// better or worse than its peers (they share the dependency), and a probe
// that fails on every open breaker takes the whole fleet out of service
// for one dependency's outage. Name as critical only the dependencies
// without which the instance can answer nothing useful. A half-open
// breaker is not open: it is testing the dependency with trial calls, and
// those need the instance's traffic (a 503 for half-open would keep an
// instance out of service, so without the calls that could close its
// breaker). A critical name that is not registered in reg when a request
// comes is unhealthy too (503, listed under "missing"): a check that
// cannot see what it was told to check does not say "healthy", so a typo
// shows at the first probe. Names can be registered after Health is
// built; each request reads reg anew.
//
// Health answers GET and HEAD (HEAD without the body); other methods get
// 405 Method Not Allowed. Responses are application/json and not cached
// (Cache-Control: no-store). The body is one object:
//
//	{
//	  "status": "unavailable",            // "ok" with 200, "unavailable" with 503
//	  "open": ["payments"],               // critical breakers open now; left out when none
//	  "missing": ["ledger"],              // critical names not registered; left out when none
//	  "guards": [                         // every registered guard, as Registry.Snapshots orders them
//	    {"kind": "breaker", "name": "payments", "refused": 12, "state": "open", "critical": true,
//	     "breaker": {"forced": false, "generation": 3, "calls": 0, "failures": 0, "slow": 0,
//	                 "failure_ratio": 0, "consecutive_failures": 0, "rejected": 12}},
//	    {"kind": "bulkhead", "name": "db", "refused": 0,
//	     "bulkhead": {"limit": 10, "in_flight": 2, "queued": 0}},
//	    {"kind": "ratelimit", "name": "api", "refused": 4,
//	     "limiter": {"rate": 100, "burst": 10, "tokens": 3.5}}
//	  ]
//	}
//
// "refused" is telemetry.Snapshot.Refused (refusals since the guard was
// made); "state" and "critical" are for breakers only; the counts in
// "breaker" are those of the current state (telemetry.BreakerStats). A
// guard of another kind has kind, name and refused.
//
// Each request takes one snapshot of each guard (Registry.Snapshots), so
// a probe costs what polling the registry costs. Health panics if reg is
// nil or an option is nil. The handler is safe for simultaneous use.
func Health(reg *telemetry.Registry, opts ...HealthOption) http.Handler {
	if reg == nil {
		panic("resiliencehttp: Health registry must not be nil")
	}
	h := &health{reg: reg}
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

// WithCritical names the breakers whose opening makes [Health] answer 503:
// the registered breakers of these names (telemetry.Breaker kind). Several
// WithCritical options add up. By default no breaker is critical (see
// Health for why). WithCritical panics if a name is "".
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
	critical []string // in the order given
}

// healthBody is the JSON body of a Health answer.
type healthBody struct {
	Status  string        `json:"status"`
	Open    []string      `json:"open,omitempty"`
	Missing []string      `json:"missing,omitempty"`
	Guards  []healthGuard `json:"guards"`
}

type healthGuard struct {
	Kind     telemetry.Kind  `json:"kind"`
	Name     string          `json:"name"`
	Refused  uint64          `json:"refused"`
	State    string          `json:"state,omitempty"`
	Critical bool            `json:"critical,omitempty"`
	Breaker  *healthBreaker  `json:"breaker,omitempty"`
	Bulkhead *healthBulkhead `json:"bulkhead,omitempty"`
	Limiter  *healthLimiter  `json:"limiter,omitempty"`
}

type healthBreaker struct {
	Forced              bool    `json:"forced"`
	Generation          uint64  `json:"generation"`
	Calls               uint64  `json:"calls"`
	Failures            uint64  `json:"failures"`
	Slow                uint64  `json:"slow"`
	FailureRatio        float64 `json:"failure_ratio"`
	ConsecutiveFailures uint64  `json:"consecutive_failures"`
	Refused             uint64  `json:"rejected"`
}

type healthBulkhead struct {
	Limit    int `json:"limit"`
	InFlight int `json:"in_flight"`
	Queued   int `json:"queued"`
}

type healthLimiter struct {
	Rate   float64 `json:"rate"`
	Burst  int     `json:"burst"`
	Tokens float64 `json:"tokens"`
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
		g := healthGuard{Kind: s.Kind, Name: s.Name, Refused: s.Refused}
		switch s.Kind {
		case telemetry.Breaker:
			b := s.Breaker
			g.State = b.State
			g.Breaker = &healthBreaker{Forced: b.Forced, Generation: b.Generation, Calls: b.Calls,
				Failures: b.Failures, Slow: b.Slow, FailureRatio: b.FailureRatio,
				ConsecutiveFailures: b.ConsecutiveFailures, Refused: b.Refused}
			if i := slices.Index(h.critical, s.Name); i >= 0 {
				g.Critical, seen[i] = true, true
				if b.State == telemetry.StateOpen {
					body.Open = append(body.Open, s.Name)
				}
			}
		case telemetry.Bulkhead:
			b := s.Bulkhead
			g.Bulkhead = &healthBulkhead{Limit: b.Limit, InFlight: b.InFlight, Queued: b.Queued}
		case telemetry.RateLimit:
			l := s.Limiter
			g.Limiter = &healthLimiter{Rate: l.Rate, Burst: l.Burst, Tokens: l.Tokens}
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
	return body
}
