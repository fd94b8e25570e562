package telemetry

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"
)

// ErrDuplicate is matched by the error of a registration under a name
// that is taken: a guard of the same kind and name, or a pipeline of the
// same name, is registered already. The registry keeps the first one.
var ErrDuplicate = errors.New("telemetry: name already registered")

// ErrNoName is matched by the error of a registration without a name: a
// guard whose Name is "" (set its Config.Name), or a pipeline registered
// under "".
var ErrNoName = errors.New("telemetry: registration needs a name")

// Registry is a set of guards and pipelines registered under names, for
// exporters and health checks to enumerate: "which breakers are open
// now?" is [Registry.OpenBreakers]. Nothing registers by itself: a guard
// or pipeline is in a registry only if [Registry.Register] or
// [Registry.RegisterPipeline] put it there, and there is no registry
// shared by the whole process (keep yours where your exporters can reach
// it).
//
// Guards are registered under their kind and name: a breaker and a
// bulkhead may both be named "payments", two breakers may not. Pipelines
// have names of their own. Registering a taken name is an error
// ([ErrDuplicate]), never a silent replacement.
//
// A Registry is an [Observer] too: give it to the policies' WithObserver
// options, and every event reaches each consumer that [Registry.AddObserver]
// added to it (the exporters of resilienceprom and resilienceotel, the
// dashboard and resiliencehttp.Health add themselves to the registry they
// are given). So one
// WithObserver(reg) feeds the event counts, the waits and the call and
// attempt durations ([WhatCall], [WhatAttempt]) to all of them, with no
// extra layer in the chain.
//
// The zero Registry is empty and ready to use. A Registry is safe for
// simultaneous use by multiple goroutines.
type Registry struct {
	mu        sync.Mutex
	guards    map[guardKey]Guard
	order     []entry // the guards in name order (then kind): kept sorted at Register, so Snapshots does not sort
	pipelines map[string]string

	observers atomic.Pointer[[]Observer] // copied on write: Observe reads without a lock
}

// entry is a registered guard and its key.
type entry struct {
	key   guardKey
	guard Guard
}

func compareKeys(a, b guardKey) int {
	return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.kind, b.kind))
}

type guardKey struct {
	name string
	kind Kind
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds g under its Name and the Kind of its snapshot (taken once,
// here; [Registry.Snapshots] lists g under that name). It returns an
// error matching [ErrNoName] if the name is "", one matching
// [ErrInvalidName] if it is not valid UTF-8, and one matching
// [ErrDuplicate] (naming the kind and name) if a guard of that kind and
// name is registered already; g is then not added. Register panics if g is
// nil.
func (r *Registry) Register(g Guard) error {
	if g == nil {
		panic("telemetry: Register guard must not be nil")
	}
	s := g.Snapshot()
	s.Name = g.Name()
	if s.Name == "" {
		return fmt.Errorf("%w: a %s without a Name", ErrNoName, kindOrGuard(s.Kind))
	}
	if !utf8.ValidString(s.Name) {
		return fmt.Errorf("%w: %s %q", ErrInvalidName, kindOrGuard(s.Kind), s.Name)
	}
	k := guardKey{s.Name, s.Kind}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.guards[k]; ok {
		return fmt.Errorf("%w: %s %q", ErrDuplicate, kindOrGuard(s.Kind), s.Name)
	}
	if r.guards == nil {
		r.guards = make(map[guardKey]Guard)
	}
	r.guards[k] = g
	i, _ := slices.BinarySearchFunc(r.order, k, func(e entry, k guardKey) int { return compareKeys(e.key, k) })
	r.order = slices.Insert(r.order, i, entry{k, g})
	return nil
}

func kindOrGuard(k Kind) string {
	if k == "" {
		return "guard"
	}
	return string(k)
}

// Unregister removes g, registered under its kind and name, and reports
// whether it was registered. A different guard registered under that kind
// and name stays (Unregister compares guards with ==, so g must be of a
// comparable type, as a pointer is). Unregister panics if g is nil.
func (r *Registry) Unregister(g Guard) bool {
	if g == nil {
		panic("telemetry: Unregister guard must not be nil")
	}
	k := guardKey{g.Name(), g.Snapshot().Kind}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.guards[k]; !ok || old != g {
		return false
	}
	delete(r.guards, k)
	i, _ := slices.BinarySearchFunc(r.order, k, func(e entry, k guardKey) int { return compareKeys(e.key, k) })
	r.order = slices.Delete(r.order, i, i+1)
	return true
}

// RegisterPipeline adds the pipeline p under name, with its chain as
// p.String() names it (for a resilience.Policy, e.g. "fallback > retry >
// breaker(payments) > timeout(2s)"; policies are immutable, so the chain
// is read once, here). It returns an error matching [ErrNoName] if name
// is "", one matching [ErrInvalidName] if it is not valid UTF-8, and one
// matching [ErrDuplicate] if a pipeline named name is
// registered already. RegisterPipeline panics if p is nil.
func (r *Registry) RegisterPipeline(name string, p fmt.Stringer) error {
	if p == nil {
		panic("telemetry: RegisterPipeline pipeline must not be nil")
	}
	if name == "" {
		return fmt.Errorf("%w: a pipeline named \"\"", ErrNoName)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("%w: pipeline %q", ErrInvalidName, name)
	}
	chain := p.String()
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pipelines[name]; ok {
		return fmt.Errorf("%w: pipeline %q", ErrDuplicate, name)
	}
	if r.pipelines == nil {
		r.pipelines = make(map[string]string)
	}
	r.pipelines[name] = chain
	return nil
}

// Snapshots returns a snapshot of every registered guard, in name order
// (guards of one name by kind). Each snapshot is consistent on its own;
// they are taken one after the other, not at one instant.
func (r *Registry) Snapshots() []Snapshot {
	r.mu.Lock()
	guards := slices.Clone(r.order) // registration only inserts: the order is already sorted
	r.mu.Unlock()
	// Outside the lock: a guard's Snapshot may run its callbacks, which
	// may use the registry.
	out := make([]Snapshot, len(guards))
	for i, e := range guards {
		out[i] = e.guard.Snapshot()
		out[i].Name = e.key.name // the name it is registered under, whatever the guard says
	}
	return out
}

// OpenBreakers returns the snapshots of the registered guards with
// states that are not closed now, open or half-open (refusing every call,
// or all but a few trials): breakers, and guards of your own whose State
// is [StateOpen] or [StateHalfOpen]. They come in name order; none (nil)
// when every such guard is closed.
func (r *Registry) OpenBreakers() []Snapshot {
	var open []Snapshot
	for _, s := range r.Snapshots() {
		if s.State == StateOpen || s.State == StateHalfOpen {
			open = append(open, s)
		}
	}
	return open
}

// Pipeline is a registered pipeline: its name and its chain.
type Pipeline struct {
	Name  string
	Chain string // e.g. "fallback > retry > breaker(payments) > timeout(2s)"
}

// Pipelines returns the registered pipelines in name order.
func (r *Registry) Pipelines() []Pipeline {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Pipeline, 0, len(r.pipelines))
	for name, chain := range r.pipelines {
		out = append(out, Pipeline{name, chain})
	}
	slices.SortFunc(out, func(a, b Pipeline) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Observe passes e to every observer added with [Registry.AddObserver], in
// the order they were added; with none, it does nothing. It takes no lock
// and does not allocate: it costs one atomic load, and the observers'
// Observe.
func (r *Registry) Observe(e Event) {
	if p := r.observers.Load(); p != nil {
		for _, o := range *p {
			o.Observe(e)
		}
	}
}

// AddObserver adds o to the observers that [Registry.Observe] passes
// events to. An observer added twice receives each event twice. The
// exporters and the dashboard call it on the registry they are given;
// call it for an observer of your own (a [Slog], a [Counter]). It panics
// if o is nil or is r itself (which would pass each event to itself
// forever; so would a cycle of registries observing each other, which it
// does not detect: make none).
func (r *Registry) AddObserver(o Observer) {
	if o == nil {
		panic("telemetry: AddObserver observer must not be nil")
	}
	if rr, ok := o.(*Registry); ok && rr == r {
		panic("telemetry: AddObserver observer must not be the registry itself")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var next []Observer
	if p := r.observers.Load(); p != nil {
		next = slices.Clone(*p)
	}
	next = append(next, o)
	r.observers.Store(&next)
}

// RemoveObserver removes o (the first one equal to it, compared with ==,
// so o must be of a comparable type, as a pointer is) from the observers
// of r, and reports whether it was there (never, for an observer of a
// type that is not comparable, such as an [ObserverFunc]). An event being passed on when
// it returns may still reach o.
func (r *Registry) RemoveObserver(o Observer) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.observers.Load()
	if p == nil {
		return false
	}
	i := slices.IndexFunc(*p, func(x Observer) bool {
		return reflect.TypeOf(x) == reflect.TypeOf(o) && reflect.TypeOf(o).Comparable() && x == o
	})
	if i < 0 {
		return false
	}
	next := slices.Delete(slices.Clone(*p), i, i+1)
	r.observers.Store(&next)
	return true
}
