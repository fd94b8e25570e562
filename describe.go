package resilience

import (
	"fmt"
	"slices"
	"time"
)

// Kind is what a layer does, as [Policy.Check] and [Policy.Bounds] read
// it: one of the Kind constants, or "" for a layer that declares none.
type Kind string

// The kinds of the built-in layers. A layer made by [New] has no kind until
// [Policy.Describe] gives it one; the built-in policies describe their
// layers themselves.
const (
	KindFallback  Kind = "fallback"  // a result when the rest of the chain fails
	KindRetry     Kind = "retry"     // calls the rest of the chain again after a failure
	KindHedge     Kind = "hedge"     // races copies of the rest of the chain
	KindBreaker   Kind = "breaker"   // refuses calls while its dependency fails
	KindBulkhead  Kind = "bulkhead"  // bounds concurrent calls: a bulkhead, an adaptive limiter
	KindRateLimit Kind = "ratelimit" // bounds the rate of calls: a rate limiter, a throttler
	KindTimeout   Kind = "timeout"   // a deadline for the rest of the chain
	// KindOther is a layer that calls the rest of the chain at most once,
	// adds at most MaxWait of its own time, and takes no part in the order
	// rules: a meter, a fault injector.
	KindOther Kind = "other"
)

// Layer describes one layer of a [Policy] for [Policy.Check] and
// [Policy.Bounds]: its kind and the settings that bound its calls and its
// time. [Policy.Describe] attaches a Layer to a layer made by [New];
// [Policy.Layers] lists them. The built-in policies describe their layers
// with the settings they were made with; a setting that changes at run
// time (a rate limiter replaced with new settings) is not followed.
//
// A field that does not apply to the kind is ignored. Durations are
// wall-clock (or the layer's clock) durations; [Off] means "no bound".
type Layer struct {
	// Name is the layer's name, as in [Policy.String]. Layers fills it in;
	// Describe ignores it (a layer keeps the name New gave it).
	Name string

	// Kind is what the layer does; "" (the zero Layer) is a layer that
	// declares nothing: Check skips it and Bounds cannot bound it.
	Kind Kind

	// Attempts is, for KindRetry, the most attempts of one call, first
	// included (Off: no limit); for KindHedge, the most attempts started,
	// 1 + MaxHedges (>= 1).
	Attempts int

	// MaxElapsed is, for KindRetry, the bound on its attempts and waits
	// together: no wait ends later than MaxElapsed after the call started.
	// 0 means no bound.
	MaxElapsed time.Duration

	// MaxWait is the longest the layer waits at one time: for KindRetry,
	// one wait between attempts (a backoff delay or a Retry-After hint);
	// for KindHedge, a Retry-After hint waited before the next attempt; for
	// KindBulkhead and KindRateLimit, the wait for a slot or a token; for
	// KindOther, the time it adds. 0 means it never waits; Off means no
	// bound.
	MaxWait time.Duration

	// Delay is, for KindHedge, the longest time between the starts of two
	// attempts while no attempt failed (Off: no bound, as for a quantile
	// delay with no upper bound).
	Delay time.Duration

	// Timeout is, for KindTimeout, its duration (> 0).
	Timeout time.Duration

	// Budget says, for KindRetry and KindHedge, whether a budget shared by
	// the layer's calls bounds the extra attempts it makes in all.
	Budget bool

	// Acknowledged lists the codes of the findings that Check leaves out
	// when they name this layer, as outer or inner layer: orders chosen
	// on purpose. [Policy.Acknowledge] adds to it.
	Acknowledged []Code
}

// validate returns why d is not a valid description, or "".
func (d Layer) validate() string {
	switch {
	case d.Kind == "":
		return "Kind must not be empty"
	case d.Kind == KindRetry && d.Attempts < 1 && d.Attempts != Off:
		return fmt.Sprintf("Attempts must be >= 1 or Off for a retry, got %d", d.Attempts)
	case d.Kind == KindHedge && d.Attempts < 1:
		return fmt.Sprintf("Attempts must be >= 1 for a hedge, got %d", d.Attempts)
	case d.Kind == KindTimeout && d.Timeout <= 0:
		return fmt.Sprintf("Timeout must be > 0 for a timeout, got %v", d.Timeout)
	case d.MaxElapsed < 0:
		return fmt.Sprintf("MaxElapsed must be >= 0, got %v", d.MaxElapsed)
	case d.MaxWait < 0 && d.MaxWait != Off:
		return fmt.Sprintf("MaxWait must be >= 0 or Off, got %v", d.MaxWait)
	case d.Delay < 0 && d.Delay != Off:
		return fmt.Sprintf("Delay must be >= 0 or Off, got %v", d.Delay)
	}
	return ""
}

// Describe returns p, a policy of one layer (as [New] makes), with d
// attached to that layer, for [Policy.Check] and [Policy.Bounds]; it
// replaces a description the layer had. The layer runs as before: a
// description is read only by Check, Bounds and Layers, never by a call.
//
// Describe panics if p does not have exactly one layer, or if d is not
// valid: an empty Kind, Attempts < 1 (other than Off) for a retry or a
// hedge, a Timeout <= 0 for a timeout, or a negative duration other than
// Off.
func (p Policy[T]) Describe(d Layer) Policy[T] {
	if p.first == nil || p.first.next == nil || p.first.next.next != nil {
		panic(fmt.Sprintf("resilience: Describe needs a policy of one layer (made by New), got %q", p.String()))
	}
	if why := d.validate(); why != "" {
		panic("resilience: Describe(" + p.first.name + "): " + why)
	}
	d.Name = ""
	d.Acknowledged = slices.Clone(d.Acknowledged)
	return chain([]link[T]{{name: p.first.name, run: p.first.run, desc: &d}})
}

// Acknowledge returns p with the codes acknowledged on each of its layers
// (see [Layer].Acknowledged): [Policy.Check] and [Checked] leave out the
// findings of these codes that name one of p's layers, wherever p is
// composed. Use it for an order chosen on purpose, where the layer is
// made:
//
//	deadline := timeout.New[T](5*time.Second).Acknowledge(resilience.TimeoutOutsideRetry)
//
// The layers run as before. A layer that has no description gets one of
// no kind, which Check still skips. Acknowledge of the zero Policy is the
// zero Policy.
func (p Policy[T]) Acknowledge(codes ...Code) Policy[T] {
	var layers []link[T]
	for l := range p.layers {
		var d Layer
		if l.desc != nil {
			d = *l.desc
		}
		d.Acknowledged = append(slices.Clone(d.Acknowledged), codes...)
		layers = append(layers, link[T]{name: l.name, run: l.run, desc: &d})
	}
	return chain(layers)
}

// Layers returns the descriptions of p's layers, outermost first, each with
// its Name; a layer that has none is a Layer with only its Name. The zero
// Policy has no layers.
func (p Policy[T]) Layers() []Layer {
	var ls []Layer
	for l := range p.layers {
		var d Layer
		if l.desc != nil {
			d = *l.desc
		}
		d.Name = l.name
		d.Acknowledged = slices.Clone(d.Acknowledged)
		ls = append(ls, d)
	}
	return ls
}

// fallbackLayer describes p, a fallback's layer.
func fallbackLayer[T any](p Policy[T]) Policy[T] { return p.Describe(Layer{Kind: KindFallback}) }
