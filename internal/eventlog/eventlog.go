// Package eventlog holds a test helper: a telemetry.Observer that records
// the events it is given, for tests that check what a policy said.
package eventlog

import (
	"sync"

	"github.com/f0b5b96b/resilience/telemetry"
)

// Recorder is a telemetry.Observer that keeps every event it observes, in
// the order observed. The zero Recorder is ready to use. It is safe for
// concurrent use: a policy may call Observe from several goroutines while
// a test calls Take or All.
type Recorder struct {
	mu     sync.Mutex
	events []telemetry.Event
}

// Observe records e.
func (r *Recorder) Observe(e telemetry.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// Take returns the events recorded since the last Take (nil if none) and
// forgets them.
func (r *Recorder) Take() []telemetry.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

// All returns a copy of the events recorded since the last Take (nil if
// none) and keeps them.
func (r *Recorder) All() []telemetry.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.events) == 0 {
		return nil
	}
	return append([]telemetry.Event(nil), r.events...)
}
