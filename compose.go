package resilience

import (
	"context"
	"strings"
)

// Op is one call to a dependency: it returns a result of type T or an error.
// An Op should honour ctx: return soon after ctx is done.
//
// A policy may run an Op more than once (retry) and from several goroutines
// at once (hedge), so an Op must be safe for that: keep per-call state in
// the Op's own variables, not in variables it shares with other calls.
type Op[T any] func(ctx context.Context) (T, error)

// Policy is a resilience policy for calls that return a T: a chain of
// layers (retry, breaker, timeout, ...) that an [Op] runs through, outermost
// first.
//
// Policies are immutable values: [Policy.Then] and [Policy.Fallback] return
// new policies and never change their receiver, so one Policy may be shared
// and used by any number of goroutines at once.
//
// The zero Policy is the identity: it runs the op unchanged. It is also the
// identity for composition: p.Then(Policy[T]{}) and Policy[T]{}.Then(p)
// behave as p.
type Policy[T any] struct {
	first *link[T] // outermost layer; nil for the identity
}

// link is one layer of a chain, with a pointer to the layer inside it. A
// chain's links are allocated together, once, by New or Then, and never
// change; the last link is the end of the chain, which runs the op.
type link[T any] struct {
	run  func(ctx context.Context, next Next[T]) (T, error)
	next *link[T] // nil at the end of the chain
	name string   // empty at the end of the chain
	desc *Layer   // what Describe attached; nil for none. Never read by a call.
}

// Next is the rest of a chain as seen from inside one layer: the layers
// inside it and, last, the op. A layer calls [Next.Call] to go on (once, more
// than once as retry does, or from several goroutines at once as hedge does),
// or returns without calling it to refuse the call.
//
// Next is a small value passed by copy; holding it does not allocate, and it
// stays valid after the layer returns (an abandoned attempt may finish later).
// Layers get their Next from the chain; the zero Next has no op and must not
// be called.
type Next[T any] struct {
	l  *link[T] // the next layer, or the end of the chain
	op Op[T]
}

// Call runs the rest of the chain under ctx and returns its result. It
// panics on the zero Next ("resilience: Next.Call on a zero Next").
func (n Next[T]) Call(ctx context.Context) (T, error) {
	// Call is inlined into the layers, so that a layer costs one frame,
	// its own: the next layer's run (or, at the end of the chain, the end
	// link's, which calls the op) is called from the layer's frame. The
	// compiler's inliner charges a call of a function value 57 of its
	// budget of 80, but a call of a function parameter 17: so the call is
	// made in invoke, which takes run as a parameter and is inlined too.
	l := n.l
	if l == nil {
		panic(zeroNextMsg)
	}
	return invoke(l.run, ctx, Next[T]{l: l.next, op: n.op})
}

// invoke returns run(ctx, next). It exists for Call's inlining budget (see
// Call); once inlined, it is the one indirect call it reads as.
func invoke[T any](run func(ctx context.Context, next Next[T]) (T, error), ctx context.Context, next Next[T]) (T, error) {
	return run(ctx, next)
}

// zeroNextMsg is the panic of Call on the zero Next.
const zeroNextMsg = "resilience: Next.Call on a zero Next: a layer gets its Next from the chain (see New); the zero Next has no op"

// nilContext panics for a call with a nil context, naming the method.
//
//go:noinline
func nilContext(method string) {
	panic("resilience: " + method + " called with a nil context (use context.Background())")
}

// New returns a one-layer policy named name. run is called once per call
// that reaches this layer; it decides whether and how often to call
// next.Call, and what to return. Built-in policies are made this way, so a
// policy written with New composes with them and, like them, costs no
// allocation per call beyond what run itself allocates.
//
// A Policy is shared: run is called by every goroutine that calls through
// the policy, concurrently, so it must be safe for simultaneous use (keep
// per-call state in local variables, shared state behind atomics or a
// lock). An outer layer such as a hedge may also call next.Call
// concurrently within one call.
//
// New panics if name is empty or run is nil.
func New[T any](name string, run func(ctx context.Context, next Next[T]) (T, error)) Policy[T] {
	if name == "" {
		panic("resilience: New name must not be empty")
	}
	if run == nil {
		panic("resilience: New run must not be nil (policy " + name + ")")
	}
	return chain([]link[T]{{name: name, run: run}})
}

// chain returns the policy of layers, outermost first: it links them in
// place and appends the end of the chain.
func chain[T any](layers []link[T]) Policy[T] {
	if len(layers) == 0 {
		return Policy[T]{}
	}
	// The end link ends the chain (its next is nil): its run calls the op.
	end := func(ctx context.Context, next Next[T]) (T, error) { return next.op(ctx) }
	links := append(layers, link[T]{run: end})
	for i := range layers {
		links[i].next = &links[i+1]
	}
	return Policy[T]{first: &links[0]}
}

// layers yields the layers of p, outermost first (not the end of the
// chain).
func (p Policy[T]) layers(yield func(*link[T]) bool) {
	for l := p.first; l != nil && l.next != nil; l = l.next {
		if !yield(l) {
			return
		}
	}
}

// Then returns the policy p(inner[0](inner[1](...(op)))): p is outermost and
// each later policy sits inside the earlier ones. Then is associative and
// the zero Policy is its identity on both sides.
//
// The usual order, outermost first, is fallback, retry, breaker, bulkhead or
// rate limiter, timeout: each attempt is bounded by the timeout, counted by
// the breaker, and retried as a whole.
func (p Policy[T]) Then(inner ...Policy[T]) Policy[T] {
	return Then(append([]Policy[T]{p}, inner...)...)
}

// Then returns ps[0].Then(ps[1:]...): the first policy is outermost. Then()
// with no arguments returns the zero (identity) Policy.
func Then[T any](ps ...Policy[T]) Policy[T] {
	var layers []link[T]
	for _, p := range ps {
		for l := range p.layers {
			layers = append(layers, link[T]{name: l.name, run: l.run, desc: l.desc})
		}
	}
	return chain(layers)
}

// Do runs op through p under ctx and returns its result. Do allocates
// nothing of its own: with built-in policies that succeed, a call costs no
// allocation beyond what op does. Do panics if ctx or op is nil.
func (p Policy[T]) Do(ctx context.Context, op Op[T]) (T, error) {
	if op == nil {
		panic("resilience: Do op must not be nil")
	}
	if ctx == nil {
		nilContext("Do")
	}
	if p.first == nil {
		return op(ctx)
	}
	// The first layer's run directly, not Next.Call: one frame less.
	return p.first.run(ctx, Next[T]{l: p.first.next, op: op})
}

// Wrap returns op guarded by p, as an Op to keep and call many times: the
// chain is composed once, here. Calling the returned Op is the same as
// p.Do(ctx, op) and allocates nothing of its own, and panics, as Do does,
// if ctx is nil. Wrap panics if op is nil.
func (p Policy[T]) Wrap(op Op[T]) Op[T] {
	if op == nil {
		panic("resilience: Wrap op must not be nil")
	}
	if p.first == nil {
		return func(ctx context.Context) (T, error) {
			if ctx == nil {
				nilContext("a wrapped Op")
			}
			return op(ctx)
		}
	}
	run, next := p.first.run, Next[T]{l: p.first.next, op: op}
	return func(ctx context.Context) (T, error) {
		if ctx == nil {
			nilContext("a wrapped Op")
		}
		return run(ctx, next)
	}
}

// String names the chain, outermost first, e.g.
// "fallback > retry > breaker(payments) > timeout(2s)". The zero Policy is
// "identity".
func (p Policy[T]) String() string {
	if p.first == nil {
		return "identity"
	}
	var names []string
	for l := range p.layers {
		names = append(names, l.name)
	}
	return strings.Join(names, " > ")
}
