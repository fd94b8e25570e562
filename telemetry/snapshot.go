package telemetry

import (
	"cmp"
	"slices"
	"strconv"
)

// Guard is a shared guard (a breaker, a bulkhead, a rate limiter, an
// adaptive limiter, a throttler, one of your own) as a [Registry], an
// exporter, a dashboard or a health check sees it: something with a name
// that describes its live state in the one shape all guards share. The
// readers of a Snapshot render its values by what each value says of
// itself (name, unit, type, help), never by the guard's kind, so a guard
// of your own is shown like the built-in ones. Each built-in guard also
// has a typed Stats method with the same numbers in its own types.
type Guard interface {
	// Name returns the guard's name (its Config.Name): the name it is
	// registered, exported and shown under. It never changes.
	Name() string
	// Snapshot returns the guard's state now, taken under the guard's
	// own rules: consistent, never torn between two states. It must be
	// safe to call at any time from any goroutine, and cheap enough to
	// call every second for thousands of guards. Its Name is Name().
	Snapshot() Snapshot
}

// Snapshot is the live state of one guard, described by the guard: its
// kind and name, its state, its lifetime refusals, and the rest of its
// numbers as named [Value]s.
type Snapshot struct {
	// Kind is the guard's kind, e.g. [Breaker]; a guard of your own
	// names its own ("mycache"). With Name it identifies the guard in a
	// [Registry].
	Kind Kind
	// Name is the guard's name (its Config.Name).
	Name string
	// State is the guard's state where it has states ([StateClosed],
	// [StateOpen], [StateHalfOpen] for a breaker); "" for a guard without
	// states. A guard whose State is [StateOpen] refuses every call: a
	// health check may count it as down (see [Snapshot.Open]).
	State string
	// Reason says in words why the guard is in its State, where the
	// State alone does not say it (a fleet-wide guard deciding on the
	// instance's own state says why: the error of its last round trip to
	// Redis); "" otherwise. It is for people (a health check's JSON, a
	// tooltip), not a label: its text is not bounded, and exporters leave
	// it out.
	Reason string
	// Refused is the number of calls the guard has refused since it was
	// made (for a breaker: ErrOpen and ErrTooManyTrials; for a bulkhead:
	// full or queue timeout; for a rate limiter: limited; ...). It only
	// grows; 0 for a guard that never refuses.
	Refused uint64
	// Values are the guard's other numbers, each describing itself, in
	// the guard's order; their names are distinct. The slice is the
	// caller's: a guard returns a new one from each Snapshot.
	Values []Value
	// Keys summarises the keys of a keyed guard (one guard per key, e.g.
	// breaker.Keyed); nil for a guard that is not keyed.
	Keys *KeySummary
}

// Open reports whether the guard refuses every call now: its State is
// [StateOpen]. A half-open breaker is not open (it admits trials).
func (s Snapshot) Open() bool { return s.State == StateOpen }

// Value returns the value named name and true, or 0 and false if s has
// none of that name.
func (s Snapshot) Value(name string) (float64, bool) {
	for _, v := range s.Values {
		if v.Name == name {
			return v.Value, true
		}
	}
	return 0, false
}

// ValueType says how a [Value] moves: a gauge goes up and down, a counter
// only grows (from the guard's making). The zero ValueType is GaugeValue.
type ValueType uint8

// The types of values.
const (
	GaugeValue   ValueType = iota // goes up and down: a level, a limit, a ratio
	CounterValue                  // only grows: a count of things since the guard was made
)

// String returns "gauge" or "counter" ("ValueType(n)" for others).
func (t ValueType) String() string {
	switch t {
	case GaugeValue:
		return "gauge"
	case CounterValue:
		return "counter"
	}
	return "ValueType(" + strconv.Itoa(int(t)) + ")"
}

// Value is one number of a guard's [Snapshot], with what an exporter or
// a dashboard needs to show it without knowing the guard: Prometheus's
// and OpenTelemetry's metrics are named from the guard's kind and the
// value's Name ("resilience_bulkhead_in_flight",
// "resilience.bulkhead.in_flight").
type Value struct {
	// Name is the value's name within its guard: lower case ASCII
	// letters, digits and underscores, starting with a letter
	// ("in_flight", "failure_ratio"), without a unit suffix.
	Name string
	// Unit is the value's unit in the UCUM notation OpenTelemetry uses:
	// "s" (seconds), "1" (a ratio or a flag), "{call}", "{token}/s"; ""
	// when it has none.
	Unit string
	// Help is one sentence saying what the value is, for a metric's help
	// text and a dashboard's tooltip.
	Help string
	// Type is GaugeValue or CounterValue.
	Type ValueType
	// Value is the number, in Unit.
	Value float64
}

// KeySummary is what a keyed guard (one guard per key) says of its keys
// in a [Snapshot]: bounded, whatever the number of keys. Its JSON names
// are snake_case, as [Snapshot] readers such as resiliencehttp.Health
// write them.
type KeySummary struct {
	// Keys is the number of keys tracked now; MaxKeys the bound on it.
	Keys    int `json:"keys"`
	MaxKeys int `json:"max_keys"`
	// Open is the number of keys whose guard refuses every call now (a
	// breaker open, a bucket empty).
	Open int `json:"open"`
	// Top are at most [TopKeys] of the tracked keys, those with the most
	// refusals first (ties by key), each with its state and refusals;
	// keys without refusals are left out.
	Top []KeyStat `json:"top,omitempty"`
}

// KeyStat is one key of a [KeySummary].
type KeyStat struct {
	Key     string `json:"key"`             // the key, as the guard's events name it
	State   string `json:"state,omitempty"` // the key's guard's state; "" for guards without states
	Refused uint64 `json:"refused"`         // refusals of the key's guard while tracked
}

// TopKeys is the most keys a [KeySummary] lists in Top.
const TopKeys = 5

// AddTop adds k to top, a list of at most [TopKeys] keys sorted by
// refusals (most first, ties by key), if it belongs there, and returns
// the list. A key without refusals is not added. It is for keyed guards
// building a [KeySummary]: it keeps the list sorted and bounded without
// sorting every key.
func AddTop(top []KeyStat, k KeyStat) []KeyStat {
	if k.Refused == 0 {
		return top
	}
	cmpKeys := func(a, b KeyStat) int { return cmp.Or(cmp.Compare(b.Refused, a.Refused), cmp.Compare(a.Key, b.Key)) }
	i, _ := slices.BinarySearchFunc(top, k, cmpKeys)
	if i >= TopKeys {
		return top
	}
	if len(top) == TopKeys {
		top = top[:TopKeys-1]
	}
	return slices.Insert(top, i, k)
}
