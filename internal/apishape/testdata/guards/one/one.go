// Package one has one guard, and a policy adapter not named after it.
package one

import "github.com/f0b5b96b/resilience/telemetry"

// Guard is the package's one guard.
type Guard struct{}

func (*Guard) Name() string                 { return "" }
func (*Guard) Snapshot() telemetry.Snapshot { return telemetry.Snapshot{} }

func WithName(string)  {}
func WithClock(any)    {}
func WithObserver(any) {}
func Policy()          {}
func GuardPolicy()     {}
func OtherPolicy()     {}
