package telemetry

import (
	"strings"
	"time"
)

// Kind is the kind of a policy or guard: the part of its events' types
// before the dot, and its snapshots' Kind. Each package owns its kind and
// its event types (breaker.Kind and breaker.EventOpened, retry.Kind and
// retry.EventGaveUp, ...); package telemetry names none.
type Kind string

// Type is the name of an event: "kind.what", one of the Event constants
// of the package that emits it (breaker.EventOpened: "breaker.opened"),
// which lists the fields each one sets. The names are stable: a dashboard
// or an alert may key on them.
type Type string

// The last parts of the types of the duration events, which a consumer
// reads without knowing the kind that emits them (as every "kind.refused"
// is a refusal): an event whose [Type.What] is WhatCall is a call that
// returned, with its duration in Elapsed and its error in Err; one whose
// What is WhatAttempt is an attempt of a call, with its number in Attempt
// too. The exporters record them as the call and attempt durations of
// the name Event.Name, and the dashboard the attempts as its tile's
// calls and latency. Of the built-in policies, the retry policy emits
// them (retry.EventCall, retry.EventAttempt); a policy of your own may
// too, under its own kind. Give one policy of a pipeline that name's
// duration events: two that both emit them under one name add up.
const (
	WhatCall    = "call"
	WhatAttempt = "attempt"
)

// Kind returns the kind of policy that emits events of type t: the part
// of t before the dot ("breaker" for "breaker.opened"), or "" if t has no
// dot.
func (t Type) Kind() Kind {
	if i := strings.IndexByte(string(t), '.'); i >= 0 {
		return Kind(t[:i])
	}
	return ""
}

// What returns the part of t after its kind's dot ("opened" for
// "breaker.opened"), or t whole if it has no dot.
func (t Type) What() string {
	return string(t[strings.IndexByte(string(t), '.')+1:])
}

// The states of a breaker as events and snapshots name them: the values of
// [Event.From], [Event.To] and [Snapshot.State].
const (
	StateClosed   = "closed"
	StateOpen     = "open"
	StateHalfOpen = "half-open"
)

// Event is one thing a policy did: a small value, built and passed without
// allocation. Type says what happened; the other fields are set as the
// package that owns the Type lists for it, and are zero where they do not
// apply.
type Event struct {
	// Type is the event's name, e.g. "breaker.opened"; its Kind is the
	// policy's kind.
	Type Type
	// Name is the name of the policy that emitted the event (its
	// Config.Name); "" if it has none.
	Name string
	// Key is the key of a keyed guard (one guard per key) that emitted
	// the event; "" for guards that are not keyed.
	Key string
	// Attempt is the number of the attempt the event is about, 1 for the
	// first call, where the Type says so; 0 elsewhere.
	Attempt int
	// Err is the error the event is about: a failure, a refusal, the
	// reason a retry gave up. nil where there is none.
	Err error
	// Wait is a wait: one about to start (a retry's backoff, a breaker's
	// cooldown, a refusal's Retry-After hint; time.Duration(math.MaxInt64)
	// means "never") or one that ended (time in a queue, for a token).
	Wait time.Duration
	// Elapsed is how long something ran, where the Type says what.
	Elapsed time.Duration
	// From and To are the states a transition left and entered
	// ([StateClosed], [StateOpen], [StateHalfOpen]); "" for other events.
	From, To string
}

// Kind returns the kind of the policy that emitted e: e.Type.Kind().
func (e Event) Kind() Kind { return e.Type.Kind() }

// Observer receives the events of the policies it is given to (through
// their WithObserver options). Policies call Observe from the goroutines
// that use them, possibly many at once, so an Observer must be safe for
// simultaneous use by multiple goroutines. Observe should be fast: it runs
// in the call it reports on (never with a policy's lock held), and should
// not panic: a panic goes up to the caller of the policy.
type Observer interface {
	Observe(e Event)
}

// ObserverFunc adapts a function to an [Observer].
type ObserverFunc func(Event)

// Observe calls f(e).
func (f ObserverFunc) Observe(e Event) { f(e) }

// Multi returns an Observer that passes each event to every observer of
// os, in order. nil observers are skipped; with none left, Multi returns
// nil, which the policies read as "no observer".
func Multi(os ...Observer) Observer {
	var m multi
	for _, o := range os {
		if o != nil {
			m = append(m, o)
		}
	}
	switch len(m) {
	case 0:
		return nil
	case 1:
		return m[0]
	}
	return m
}

type multi []Observer

func (m multi) Observe(e Event) {
	for _, o := range m {
		o.Observe(e)
	}
}
