package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

// ErrNoPipeline is matched by the error of [Set.Policy] for a name that
// the set's current document does not have, and by the error of a call
// through a Set's layer whose pipeline a reload has removed.
var ErrNoPipeline = errors.New("pipeline: no pipeline of that name")

// Set holds the pipelines of a document and reloads them live: [Set.Apply]
// builds a new version from a document and swaps it in atomically, and
// the layer that [Set.Policy] returns runs each call through the version
// current when the call starts (a call in flight finishes on the version
// it started on).
//
// A guard keeps its state across reloads as long as its name and kind are
// unchanged: an open breaker stays open, a rate limiter keeps its tokens,
// a bulkhead its calls in flight. Such a guard takes its new settings
// live, and only settings it can take live may change: a breaker's
// Threshold, a bulkhead's MaxConcurrent, a rate limiter's Rate and Burst.
// A document that changes any other setting of a running guard is
// rejected ([ErrNotLive]); rename the guard to replace it with a new one,
// state and all. Layers that are not guards (retry, timeout, hedge, kinds
// of [WithKind]) are built anew at each reload.
//
// A Set is safe for simultaneous use by multiple goroutines: calls never
// wait on a reload, and reloads run one at a time.
type Set[T any] struct {
	s   settings
	mu  sync.Mutex // serialises Apply
	cur atomic.Pointer[version[T]]
}

// version is one document, built.
type version[T any] struct {
	n      uint64
	pipes  map[string]resilience.Policy[T]
	specs  map[string]string // each pipeline's layers, canonical
	guards map[string]*guard
}

// Reload is what one [Set.Apply] changed.
type Reload struct {
	// Version counts the successful Applies of the Set: 1 for the first.
	Version uint64
	// Changes lists what changed, guards first, each group in name order;
	// empty if the document means the same as the one before.
	Changes []Change
	// Errors lists what failed without stopping the reload: a guard the
	// Registry of [WithRegistry] refused.
	Errors []error
}

// String lists the changes, one per line.
func (r Reload) String() string {
	var b strings.Builder
	b.WriteString("version " + strconv.FormatUint(r.Version, 10))
	for _, c := range r.Changes {
		b.WriteString("\n" + c.String())
	}
	for _, e := range r.Errors {
		b.WriteString("\nerror: " + e.Error())
	}
	return b.String()
}

// Change is one guard or pipeline that a reload added, removed or changed.
type Change struct {
	// Path is the JSON path of the guard or pipeline:
	// "guards.pricing-breaker", "pipelines.pricing".
	Path   string
	Action Action
	// Fields names the configuration fields that changed, for Retuned (a
	// guard's live settings) and Replaced (every field of the kind
	// before and after).
	Fields []string
}

func (c Change) String() string {
	s := c.Action.String() + " " + c.Path
	if len(c.Fields) > 0 {
		s += " (" + strings.Join(c.Fields, ", ") + ")"
	}
	return s
}

// Action is what a reload did to a guard or a pipeline.
type Action uint8

const (
	Added    Action = iota + 1 // new in this document
	Removed                    // gone from this document; calls in flight finish on it
	Retuned                    // a guard kept, state and all, with new live settings
	Replaced                   // a guard whose kind changed: a new guard, with fresh state
	Changed                    // a pipeline whose layers changed
)

func (a Action) String() string {
	switch a {
	case Added:
		return "added"
	case Removed:
		return "removed"
	case Retuned:
		return "retuned"
	case Replaced:
		return "replaced"
	case Changed:
		return "changed"
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// NewSet returns an empty Set configured by opts: its first [Set.Apply]
// gives it pipelines. It panics if an option is nil, or a [WithKind]
// builds policies of another type than T.
func NewSet[T any](opts ...Option) *Set[T] {
	return &Set[T]{s: configure[T](opts)}
}

// Apply makes d the set's document: it builds d's guards and pipelines,
// keeping each running guard whose name and kind d keeps (see [Set]), and
// swaps the new version in. Calls that started before finish on the
// version they started on.
//
// An invalid document is rejected whole, with nothing changed: Apply then
// returns an [*Error] naming the JSON path of the first fault (in name
// order: guards, then pipelines), such as
// "pipelines.pricing[2].config.Duration: timeout: Duration must be > 0,
// or 0 for New's duration, got -1s", or
// "guards.db.config.Cooldown: pipeline: the setting cannot change while
// the guard runs: ...", which matches [ErrNotLive].
//
// Apply returns what changed, and passes it to the function of
// [WithOnReload]. Applies run one at a time; calls through the set never
// wait for one.
func (s *Set[T]) Apply(d Document) (Reload, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.cur.Load()
	if old == nil {
		old = &version[T]{}
	}
	v, changes, tunes, made, err := plan(&s.s, d, old)
	if err != nil {
		return Reload{}, err
	}
	for _, t := range tunes {
		t()
	}
	v.n = old.n + 1
	s.cur.Store(v)
	r := Reload{Version: v.n, Changes: changes}
	if s.s.registry != nil {
		// A guard the new version no longer has (removed, or replaced by
		// one of another kind) leaves the registry first, so that one made
		// under its name can take its place.
		for name, g := range old.guards {
			if ng := v.guards[name]; ng == nil || ng.value != g.value {
				if tg, ok := g.value.(telemetry.Guard); ok {
					s.s.registry.Unregister(tg)
				}
			}
		}
		for _, g := range made {
			if tg, ok := g.value.(telemetry.Guard); ok {
				if err := s.s.registry.Register(tg); err != nil {
					r.Errors = append(r.Errors, fmt.Errorf("pipeline: %w", err))
				}
			}
		}
	}
	if s.s.onReload != nil {
		s.s.onReload(r)
	}
	return r, nil
}

// ApplyJSON is [Parse] then [Set.Apply].
func (s *Set[T]) ApplyJSON(data []byte) (Reload, error) {
	d, err := Parse(data)
	if err != nil {
		return Reload{}, err
	}
	return s.Apply(d)
}

// Policy returns the layer named "pipeline(name)" that runs each call
// through the pipeline name of the version current when the call starts:
// a reload changes what the layer does from the next call on. The layer
// costs one atomic load, one map lookup and one allocation per call on
// top of the pipeline's own cost. A call through it after a reload
// removed name fails with an error matching [ErrNoPipeline].
//
// Policy returns an error matching ErrNoPipeline if the current document
// has no pipeline name (or there is none yet).
func (s *Set[T]) Policy(name string) (resilience.Policy[T], error) {
	if _, ok := s.Current(name); !ok {
		return resilience.Policy[T]{}, fmt.Errorf("%w: %q", ErrNoPipeline, name)
	}
	gone := fmt.Errorf("%w: %q (removed by a reload)", ErrNoPipeline, name)
	return resilience.New("pipeline("+name+")", func(ctx context.Context, next resilience.Next[T]) (T, error) {
		p, ok := s.cur.Load().pipes[name]
		if !ok {
			var zero T
			return zero, gone
		}
		return p.Do(ctx, next.Call)
	}), nil
}

// Current returns the pipeline name of the current version, a policy of
// its own (reloads do not change it), for Describe, Check and Bounds or a
// call that must not see a reload; false if there is none.
func (s *Set[T]) Current(name string) (resilience.Policy[T], bool) {
	v := s.cur.Load()
	if v == nil {
		return resilience.Policy[T]{}, false
	}
	p, ok := v.pipes[name]
	return p, ok
}

// Guard returns the guard name of the current version: a
// *breaker.Breaker, *bulkhead.Bulkhead, *ratelimit.Limiter,
// *adaptive.Limiter or *throttle.Throttler; nil if there is none.
func (s *Set[T]) Guard(name string) any {
	v := s.cur.Load()
	if v == nil || v.guards[name] == nil {
		return nil
	}
	return v.guards[name].value
}

// Version returns the number of successful Applies so far.
func (s *Set[T]) Version() uint64 {
	if v := s.cur.Load(); v != nil {
		return v.n
	}
	return 0
}

// Pipelines is the result of [Build]: the pipelines of a document, by
// name, and its guards, by name (a *breaker.Breaker, ...).
type Pipelines[T any] struct {
	Policies map[string]resilience.Policy[T]
	Guards   map[string]any
}

// Build builds the guards and pipelines of d once, for a program that
// does not reload (see [Set] for one that does). It returns an [*Error]
// naming the JSON path of the first fault, or an error of a guard the
// Registry of [WithRegistry] refused. It panics as [NewSet] does.
func Build[T any](d Document, opts ...Option) (Pipelines[T], error) {
	s := NewSet[T](opts...)
	r, err := s.Apply(d)
	if err != nil {
		return Pipelines[T]{}, err
	}
	if len(r.Errors) > 0 {
		return Pipelines[T]{}, errors.Join(r.Errors...)
	}
	v := s.cur.Load()
	out := Pipelines[T]{Policies: maps.Clone(v.pipes), Guards: make(map[string]any, len(v.guards))}
	for name, g := range v.guards {
		out.Guards[name] = g.value
	}
	return out, nil
}
