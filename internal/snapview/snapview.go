// Package snapview reads a telemetry.Snapshot as the readers of a guard
// (exporters, the dashboard, Health) render it, for the policies' tests.
package snapview

import "github.com/f0b5b96b/resilience/telemetry"

// View is a telemetry.Snapshot as the guard describes itself: the parts
// every reader renders, its values by name.
type View struct {
	Kind    telemetry.Kind
	Name    string
	State   string
	Refused uint64
	Values  map[string]float64
	Keys    *telemetry.KeySummary
}

// Of returns s as a View. It panics if a value lacks its help or unit: a
// guard's values describe themselves.
func Of(s telemetry.Snapshot) View {
	v := View{Kind: s.Kind, Name: s.Name, State: s.State, Refused: s.Refused, Values: map[string]float64{}, Keys: s.Keys}
	for _, x := range s.Values {
		if x.Help == "" || x.Unit == "" {
			panic("value " + x.Name + " does not describe itself")
		}
		v.Values[x.Name] = x.Value
	}
	return v
}
