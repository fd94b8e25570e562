package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/f0b5b96b/resilience/clock"
)

// The attribute keys of the lines a [Slog] writes, beside slog's own
// (time, level, msg: the event's Type). An attribute is left out when its
// field is zero.
const (
	AttrPolicy     = "policy"     // the policy's kind: "breaker"
	AttrName       = "name"       // Event.Name
	AttrKey        = "key"        // Event.Key
	AttrAttempt    = "attempt"    // Event.Attempt
	AttrError      = "error"      // Event.Err
	AttrWait       = "wait"       // Event.Wait, "never" for the largest Duration
	AttrElapsed    = "elapsed"    // Event.Elapsed
	AttrFrom       = "from"       // Event.From
	AttrTo         = "to"         // Event.To
	AttrSuppressed = "suppressed" // lines left out by the rate limit since the last one
)

// SlogOptions configures a [Slog]. A zero field means its default; nil
// options are all defaults.
type SlogOptions struct {
	// Interval is the rate limit on per-call events (every event that is
	// not a transition: refusals, failures, retries, give-ups, ...): at
	// most one line per Interval for each policy name and event type; the
	// line after a gap says how many were left out (AttrSuppressed), so an
	// outage writes a few lines a second, not one per call. Transitions
	// are always written. 0 means 1s; -1 (resilience.Off) switches the
	// limit off: every event is written.
	Interval time.Duration
	// Clock is the time source of the rate limit. nil means clock.Real().
	Clock clock.Clock
}

// Slog is an [Observer] that writes events to a *slog.Logger: one line per
// event, its message the event's Type, its attributes the AttrXxx keys,
// at the level [Level] gives (a breaker that opens and a retry that gives
// up: Warn; other transitions: Info; per-call events such as refusals:
// Debug), and per-call events rate-limited as
// [SlogOptions.Interval] says. Events below the logger's level cost one
// Enabled call.
//
// A Slog is safe for simultaneous use by multiple goroutines.
type Slog struct {
	l        *slog.Logger
	interval time.Duration // <= 0: no limit
	clk      clock.Clock

	mu     sync.Mutex
	limits map[countKey]*limit
}

// limit is the rate limit's state for one policy name and event type.
type limit struct {
	last       time.Time // when the last line was written
	suppressed uint64    // lines left out since
}

// NewSlog returns a Slog writing to l, configured by o (nil: the
// defaults). It panics if l is nil or o.Interval is negative and not -1.
func NewSlog(l *slog.Logger, o *SlogOptions) *Slog {
	if l == nil {
		panic("telemetry: NewSlog logger must not be nil")
	}
	var opts SlogOptions
	if o != nil {
		opts = *o
	}
	switch {
	case opts.Interval == 0:
		opts.Interval = time.Second
	case opts.Interval < -1:
		panic(fmt.Sprintf("telemetry: SlogOptions.Interval must be >= 0 or Off (-1), got %v", opts.Interval))
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real()
	}
	return &Slog{l: l, interval: opts.Interval, clk: opts.Clock, limits: make(map[countKey]*limit)}
}

// Level returns the level at which a [Slog] writes events of type t. It
// reads the last part of t only ([Type.What]: "opened" in
// "breaker.opened"), so that a kind of one's own gets the level of the
// built-in events it resembles:
//
//   - Warn: "opened" (a breaker that opens), "evicted" (a guard's state
//     forgotten to make room: breaker.evicted, cache.evicted), "gave_up"
//     (a retry that gives up);
//   - Info: the other transitions, "half_opened" and "closed", and
//     "abandoned" (an op left running past its deadline) and "used" (a
//     fallback's result);
//   - Debug: the outcome of one call or request, "refused", "failure",
//     "ignored", "answered", "expired", "attempt_failed", "waiting",
//     "waited", "queued_admitted", "launched", "won",
//     "losers_cancelled", and the durations, [WhatCall] and
//     [WhatAttempt];
//   - Info: every other type, and a type with no dot.
func Level(t Type) slog.Level {
	if !strings.Contains(string(t), ".") {
		return slog.LevelInfo
	}
	switch t.What() {
	case "opened", "evicted", "gave_up":
		return slog.LevelWarn
	case "half_opened", "closed", "abandoned", "used":
		return slog.LevelInfo
	case "refused", "failure", "ignored", "answered", "expired",
		"attempt_failed", "waiting", "waited", "queued_admitted",
		"launched", "won", "losers_cancelled", WhatCall, WhatAttempt,
		"hit", "miss", "coalesced":
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// Observe writes e, unless the logger is not enabled at e's level or the
// rate limit leaves it out.
func (s *Slog) Observe(e Event) {
	ctx := context.Background()
	level := Level(e.Type)
	if !s.l.Enabled(ctx, level) {
		return
	}
	var suppressed uint64
	if s.interval > 0 && e.To == "" { // transitions are never left out
		var ok bool
		if suppressed, ok = s.admit(countKey{e.Name, e.Type}); !ok {
			return
		}
	}
	var buf [10]slog.Attr
	attrs := append(buf[:0], slog.String(AttrPolicy, string(e.Kind())))
	if e.Name != "" {
		attrs = append(attrs, slog.String(AttrName, e.Name))
	}
	if e.Key != "" {
		attrs = append(attrs, slog.String(AttrKey, e.Key))
	}
	if e.Attempt != 0 {
		attrs = append(attrs, slog.Int(AttrAttempt, e.Attempt))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String(AttrError, e.Err.Error()))
	}
	switch {
	case e.Wait == math.MaxInt64:
		attrs = append(attrs, slog.String(AttrWait, "never"))
	case e.Wait != 0:
		attrs = append(attrs, slog.Duration(AttrWait, e.Wait))
	}
	if e.Elapsed != 0 {
		attrs = append(attrs, slog.Duration(AttrElapsed, e.Elapsed))
	}
	if e.From != "" {
		attrs = append(attrs, slog.String(AttrFrom, e.From))
	}
	if e.To != "" {
		attrs = append(attrs, slog.String(AttrTo, e.To))
	}
	if suppressed != 0 {
		attrs = append(attrs, slog.Uint64(AttrSuppressed, suppressed))
	}
	s.l.LogAttrs(ctx, level, string(e.Type), attrs...)
}

// admit reports whether a line for k may be written now, and how many
// lines for k were left out since the last one.
func (s *Slog) admit(k countKey) (suppressed uint64, ok bool) {
	now := s.clk.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.limits[k]
	if l == nil {
		s.limits[k] = &limit{last: now}
		return 0, true
	}
	// A clock set back does not silence the policy until it catches up.
	if d := now.Sub(l.last); d >= s.interval || d < 0 {
		n := l.suppressed
		l.last, l.suppressed = now, 0
		return n, true
	}
	l.suppressed++
	return 0, false
}
