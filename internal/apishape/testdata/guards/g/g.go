// Package g lists a guard that does not exist and one without Snapshot,
// and has a Stats that is not a struct.
package g

import "github.com/f0b5b96b/resilience/telemetry"

// Guard has Name but no Snapshot.
type Guard struct{}

func (*Guard) Name() string { return "" }

// Snapshot is a function, not Guard's method.
func Snapshot() telemetry.Snapshot { return telemetry.Snapshot{} }

// Stats is a map: it has no field Refused.
type Stats map[string]uint64

func WithName(string)  {}
func WithClock(any)    {}
func WithObserver(any) {}
