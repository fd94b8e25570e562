package chaos

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience/telemetry"
)

// Injector decides which calls get chaos: each call that reaches a chaos
// policy gets it with probability Rate while the injector is enabled, and
// none does while it is disabled. Rate and the switch change at run time;
// a change applies to the calls that arrive after it.
//
// Create one with [NewInjector]; the zero Injector is not usable. An
// Injector is safe for simultaneous use by multiple goroutines, and any
// number of chaos policies may share one (one switch for an experiment).
type Injector struct {
	// p is math.Float64bits of the probability in effect: the rate while
	// enabled, 0 while disabled. It is all that a call reads.
	p atomic.Uint64

	mu      sync.Mutex // serialises changes of rate and enabled, and their store to p
	rate    float64
	enabled bool

	random   func() float64
	name     string
	observer telemetry.Observer

	// The counts of calls decided while chaos was on, and of injections
	// by type (see Snapshot). Written only while the probability is
	// above 0, so an injector that is off costs a call one load.
	calls, faults, latencies, results, others atomic.Uint64
}

// NewInjector returns an injector of the given rate, in [0, 1]: the share
// of calls that get chaos while it is enabled (0 none, 1 all). The rate is
// positional because every injector needs one; what is optional is an
// option. It starts enabled (see [Config.Disabled]). Each call decided
// while the rate is strictly between 0 and 1 draws a number from the
// injector's source ([WithRandom]; by default the top-level Float64 of
// math/rand/v2). To make a test's chaos repeatable, give a seeded source
// with [WithRand]. [WithName] names the injector (for a
// telemetry.Registry, see [Injector.Snapshot]) and [WithObserver] reports
// each injection as an event; [WithConfig] gives a [Config] read at run
// time. NewInjector panics if rate is not in [0, 1], if an option is nil,
// and with the message of [Config.Validate] if the configuration is
// invalid.
func NewInjector(rate float64, opts ...Option) *Injector {
	checkRate(rate)
	c := Config{Rate: rate}
	for _, opt := range opts {
		if opt == nil {
			panic("chaos: NewInjector option must not be nil")
		}
		opt.apply(&c)
	}
	if err := c.Validate(); err != nil {
		panic(err.Error())
	}
	if c.Random == nil {
		c.Random = rand.Float64
	}
	in := &Injector{rate: c.Rate, enabled: !c.Disabled, random: c.Random, name: c.Name, observer: c.Observer}
	in.storeLocked()
	return in
}

func checkRate(rate float64) {
	if !(rate >= 0 && rate <= 1) {
		panic(fmt.Sprintf("chaos: rate must be in [0, 1], got %v", rate))
	}
}

// Inject decides one call: it reports whether the call gets chaos. The
// chaos policies decide their calls the same way; call it yourself for
// chaos of your own: each call that gets chaos counts as an injection of
// your own (the injected_other value of [Injector.Snapshot]) and is
// reported as [EventInjected]. While the injector is disabled or its rate
// is 0 it costs one atomic load.
func (in *Injector) Inject() bool {
	p := in.p.Load()
	return p != 0 && in.own(p)
}

// own decides a call of Inject under the probability of bits p, above 0,
// and counts and reports an injection.
//
//go:noinline
func (in *Injector) own(p uint64) bool {
	if !in.draw(p) {
		return false
	}
	in.injected(&in.others, EventInjected, nil, 0)
	return true
}

// decide reports whether a call of a chaos policy gets chaos; the policy
// reports the injection with injected.
func (in *Injector) decide() bool {
	p := in.p.Load()
	return p != 0 && in.draw(p)
}

// draw reports whether a call gets chaos under the probability of bits p,
// which is above 0, and counts the call. It is kept out of line so that
// decide, the whole cost of a call while chaos is off, inlines into the
// policies.
//
//go:noinline
func (in *Injector) draw(p uint64) bool {
	in.calls.Add(1)
	r := math.Float64frombits(p)
	return r >= 1 || in.random() < r
}

// injected counts an injection in n and reports it as an event of type
// typ, with err and wait.
func (in *Injector) injected(n *atomic.Uint64, typ telemetry.Type, err error, wait time.Duration) {
	n.Add(1)
	if o := in.observer; o != nil {
		o.Observe(telemetry.Event{Type: typ, Name: in.name, Err: err, Wait: wait})
	}
}

// SetRate sets the rate, in [0, 1]. A disabled injector keeps it for when
// it is enabled again. SetRate panics if rate is not in [0, 1].
func (in *Injector) SetRate(rate float64) {
	checkRate(rate)
	in.mu.Lock()
	defer in.mu.Unlock()
	in.rate = rate
	in.storeLocked()
}

// Enable switches chaos on at the injector's rate.
func (in *Injector) Enable() { in.setEnabled(true) }

// Disable switches chaos off: no call gets any until Enable.
func (in *Injector) Disable() { in.setEnabled(false) }

func (in *Injector) setEnabled(on bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.enabled = on
	in.storeLocked()
}

// storeLocked publishes the probability in effect. in.mu must be held.
func (in *Injector) storeLocked() {
	p := 0.0
	if in.enabled {
		p = in.rate
	}
	in.p.Store(math.Float64bits(p))
}

// Enabled reports whether the injector is enabled.
func (in *Injector) Enabled() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.enabled
}

// Rate returns the injector's rate, enabled or not.
func (in *Injector) Rate() float64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.rate
}
