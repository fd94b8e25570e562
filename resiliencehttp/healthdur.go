package resiliencehttp

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience/telemetry"
)

// durations are the call and attempt durations that a [Health] handler
// heard from its registry (the duration events: telemetry.WhatCall and
// telemetry.WhatAttempt), by name, since the handler was made.
type durations struct {
	mu     sync.RWMutex
	byName map[string]*durationCounts
}

// durationCounts are one name's counts: each added to atomically.
type durationCounts struct {
	calls, callNanos       atomic.Int64
	attempts, attemptNanos atomic.Int64
}

// healthDurations is a name's durations in a Health body.
type healthDurations struct {
	Name               string  `json:"name"`
	Calls              int64   `json:"calls"`
	CallMeanSeconds    float64 `json:"call_mean_seconds"`
	Attempts           int64   `json:"attempts"`
	AttemptMeanSeconds float64 `json:"attempt_mean_seconds"`
}

// Observe counts e if it is a call's or an attempt's duration with a
// name. It costs a read lock and two atomic adds, and no allocation once
// the name has been seen.
func (d *durations) Observe(e telemetry.Event) {
	what := e.Type.What()
	if e.Name == "" || (what != telemetry.WhatCall && what != telemetry.WhatAttempt) {
		return
	}
	d.mu.RLock()
	c := d.byName[e.Name]
	d.mu.RUnlock()
	if c == nil {
		d.mu.Lock()
		if c = d.byName[e.Name]; c == nil {
			if d.byName == nil {
				d.byName = make(map[string]*durationCounts)
			}
			c = new(durationCounts)
			d.byName[strings.Clone(e.Name)] = c
		}
		d.mu.Unlock()
	}
	if what == telemetry.WhatCall {
		c.calls.Add(1)
		c.callNanos.Add(int64(e.Elapsed))
	} else {
		c.attempts.Add(1)
		c.attemptNanos.Add(int64(e.Elapsed))
	}
}

// list returns the names' durations in name order; nil with none.
func (d *durations) list() []healthDurations {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []healthDurations
	for name, c := range d.byName {
		h := healthDurations{Name: name, Calls: c.calls.Load(), Attempts: c.attempts.Load()}
		if h.Calls > 0 {
			h.CallMeanSeconds = mean(c.callNanos.Load(), h.Calls)
		}
		if h.Attempts > 0 {
			h.AttemptMeanSeconds = mean(c.attemptNanos.Load(), h.Attempts)
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b healthDurations) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// mean is the mean of n durations summing to nanos, in seconds.
func mean(nanos, n int64) float64 {
	return (time.Duration(nanos) / time.Duration(n)).Seconds()
}
