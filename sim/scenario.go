package sim

import (
	"fmt"
	"time"
)

// Scenario is what a run simulates: a server, the clients that call it,
// for how long, and the seed that makes it repeatable.
type Scenario struct {
	// Name names the scenario in results, tables and plots.
	Name string
	// Seed seeds every random draw of the run: the clients' start times
	// and pauses, and [Env.Rand]. The same scenario, policy set and seed
	// give the same result.
	Seed uint64
	// Duration is the virtual time the run covers: no call starts after
	// it, and calls still in progress then are cut short. The run ends
	// earlier if every client is done. 0 means 1 minute.
	Duration time.Duration
	// Bucket is the width of the entries of a Result's series. 0 means
	// Duration/200 (at least 1ms).
	Bucket time.Duration
	// Server is the model of the dependency.
	Server Server
	// Clients are the groups of clients that call the server through the
	// pipeline. At least one.
	Clients []Clients
}

// Clients is a group of simulated clients: each makes calls one after the
// other through the pipeline, with a pause between them, in a closed loop
// (a client waits for its call to end before the next), as a service's
// workers or a user's requests do.
type Clients struct {
	// N is the number of clients in the group. 0 means 1.
	N int
	// Start is when the group's first calls start, since the start of the
	// run; each client's first call starts at a time drawn uniformly from
	// [Start, Start+Ramp). 0 means at once.
	Start time.Duration
	// Ramp spreads the clients' first calls over this time. 0 means all at
	// Start.
	Ramp time.Duration
	// Stop is when the group stops: no call of it starts at or after Stop.
	// 0 means the end of the run.
	Stop time.Duration
	// Calls is the number of calls each client makes. 0 means no limit:
	// calls until Stop.
	Calls int
	// Think is the mean pause between the end of a client's call and the
	// start of its next, exponentially distributed. 0 means none.
	Think time.Duration
}

// Validate reports the first invalid field of s, or nil.
func (s Scenario) Validate() error {
	switch {
	case s.Duration < 0:
		return fmt.Errorf("sim: Scenario.Duration must be >= 0, got %v", s.Duration)
	case s.Bucket < 0:
		return fmt.Errorf("sim: Scenario.Bucket must be >= 0, got %v", s.Bucket)
	case len(s.Clients) == 0:
		return fmt.Errorf("sim: Scenario.Clients must have at least one group, got none")
	}
	if err := s.Server.Validate(); err != nil {
		return err
	}
	for i, c := range s.Clients {
		switch {
		case c.N < 0:
			return fmt.Errorf("sim: Scenario.Clients[%d].N must be >= 0, got %d", i, c.N)
		case c.Start < 0 || c.Ramp < 0 || c.Stop < 0 || c.Think < 0:
			return fmt.Errorf("sim: Scenario.Clients[%d] times must be >= 0, got Start %v, Ramp %v, Stop %v, Think %v", i, c.Start, c.Ramp, c.Stop, c.Think)
		case c.Calls < 0:
			return fmt.Errorf("sim: Scenario.Clients[%d].Calls must be >= 0, got %d", i, c.Calls)
		}
	}
	return nil
}

// withDefaults returns s with its zero fields set to their defaults.
func (s Scenario) withDefaults() Scenario {
	if s.Duration == 0 {
		s.Duration = time.Minute
	}
	if s.Bucket == 0 {
		s.Bucket = max(s.Duration/200, time.Millisecond)
	}
	return s
}
