package chaos

import "github.com/f0b5b96b/resilience/telemetry"

// Kind is the kind of an injector's snapshots and events.
const Kind telemetry.Kind = "chaos"

// The states of an injector, as [Injector.Snapshot] names them.
const (
	StateOn  = "on"  // enabled: calls get chaos at the injector's rate
	StateOff = "off" // disabled: no call gets chaos
)

// The events of an injector, which this package owns (as each policy owns
// its events: breaker.EventOpened, ...): one per injection, to the
// observer given with [WithObserver]. Their Name is the injector's name.
const (
	// EventFault: [Fault] injected a fault into a call (Err: the fault
	// func's error; nil if it let the call go on).
	EventFault telemetry.Type = "chaos.fault"
	// EventLatency: [Latency] injected latency into a call (Wait: the
	// delay drawn, 0 if it was not above 0). It is reported before the
	// wait.
	EventLatency telemetry.Type = "chaos.latency"
	// EventResult: [Result] made up the result of a call (Err: the
	// result's error, nil if none).
	EventResult telemetry.Type = "chaos.result"
	// EventInjected: a call of [Injector.Inject] of your own got chaos.
	EventInjected telemetry.Type = "chaos.injected"
)

// Name returns the injector's name, given with [WithName]; "" if it has
// none.
func (in *Injector) Name() string { return in.name }

// Snapshot returns the injector's state in the shape all guards share,
// for a telemetry.Registry, exporters, dashboards and health checks: Kind
// "chaos", the injector's Name, State [StateOn] or [StateOff], no
// refusals (chaos refuses nothing: an injected fault is the dependency's
// failure as the pipeline sees it), and these values:
//
//	rate              gauge    "1"       the injector's rate, in [0, 1], on or off
//	calls             counter  "{call}"  calls decided while chaos was on
//	injected_fault    counter  "{call}"  faults injected by Fault
//	injected_latency  counter  "{call}"  latencies injected by Latency
//	injected_result   counter  "{call}"  results made up by Result
//	injected_other    counter  "{call}"  calls of Inject of your own that got chaos
//
// Calls made while the injector is off, or its rate is 0, are not counted
// in calls: they cost one atomic load and nothing else. The counters only
// grow. Snapshot is safe to call at any time from any goroutine; it
// allocates the Values slice.
func (in *Injector) Snapshot() telemetry.Snapshot {
	in.mu.Lock()
	state, rate := StateOff, in.rate
	if in.enabled {
		state = StateOn
	}
	in.mu.Unlock()
	return telemetry.Snapshot{
		Kind:  Kind,
		Name:  in.name,
		State: state,
		Values: []telemetry.Value{
			{Name: "rate", Unit: "1", Help: "The share of calls that get chaos while the injector is on, in [0, 1].", Value: rate},
			{Name: "calls", Unit: "{call}", Type: telemetry.CounterValue, Help: "Calls the injector decided while chaos was on.", Value: float64(in.calls.Load())},
			{Name: "injected_fault", Unit: "{call}", Type: telemetry.CounterValue, Help: "Calls into which a chaos.fault policy injected a fault.", Value: float64(in.faults.Load())},
			{Name: "injected_latency", Unit: "{call}", Type: telemetry.CounterValue, Help: "Calls into which a chaos.latency policy injected latency.", Value: float64(in.latencies.Load())},
			{Name: "injected_result", Unit: "{call}", Type: telemetry.CounterValue, Help: "Calls whose result a chaos.result policy made up.", Value: float64(in.results.Load())},
			{Name: "injected_other", Unit: "{call}", Type: telemetry.CounterValue, Help: "Calls of Inject of your own that got chaos.", Value: float64(in.others.Load())},
		},
	}
}
