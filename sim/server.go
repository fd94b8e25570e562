package sim

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// ErrOverloaded is the error of a call that the server refused at once
// because [Server.Capacity] calls were in progress.
var ErrOverloaded = errors.New("sim: server overloaded")

// ErrConflict is the error of a call of a [Server] with Conflicts that
// another call's write overtook.
var ErrConflict = errors.New("sim: write conflict")

// ErrDown is the error of a call that came during an [Outage] of mode
// [Down].
var ErrDown = errors.New("sim: server down")

// Server is the model of the dependency that the simulated clients call.
// A call that arrives while n other calls are in progress takes
// Base + n × Slope of virtual time; beyond Capacity calls at once the
// server refuses new calls at once; during an Outage it fails or hangs
// them. With Workers, at most that many calls are served at once and the
// others wait their turn, first come first served: a server with a pool
// of workers, whose latency under overload is queueing.
//
// A call whose caller gives up (a timeout) goes on taking its share of the
// server until its time is up, as a real server goes on working on a
// request whose client has left: the load that retries add is real load.
// The zero Server answers every call in 10ms, however many there are.
type Server struct {
	// Base is the latency of a call with no other call in progress. 0
	// means 10ms.
	Base time.Duration
	// Slope is the latency each call in progress adds to a new call: the
	// cost of contention. 0 means none.
	Slope time.Duration
	// Noise is the standard deviation of a call's latency around the
	// model's (normally distributed, never below 0): the variance of a real
	// network and server. 0 means none.
	Noise time.Duration
	// Slow is the share of calls, in [0, 1], that take SlowLatency more
	// than the model says, drawn at random for each call: the long tail
	// of a slow replica, a garbage collector's pause, a cold cache. 0
	// means none.
	Slow float64
	// SlowLatency is what a call drawn for Slow takes more. It must be >
	// 0 when Slow is.
	SlowLatency time.Duration
	// Capacity is the most calls in progress at once; a call beyond it
	// fails at once with [ErrOverloaded] and takes no share of the server.
	// 0 means no limit.
	Capacity int
	// Workers is how many calls the server serves at once: a call that
	// arrives while all are busy waits, in order of arrival, for the first
	// to be free, and its latency is that wait plus the model's latency
	// (drawn at its arrival). The calls waiting count as calls in progress
	// for Slope and Capacity. 0 means no limit: every call is served at
	// once.
	Workers int
	// Resizes change Workers during the run: from each Resize's At on,
	// the server has its Workers, until the next. A server that shrinks
	// lets the calls it has accepted finish on the workers it retires. They
	// must be in order of At, each with Workers >= 1, and need the
	// Server's Workers >= 1.
	Resizes []Resize
	// Conflicts makes the server a single record under optimistic
	// concurrency control: each call reads the record's version when it
	// arrives and writes it when its latency is up, and fails with
	// [ErrConflict] if another call wrote it in between, as a
	// compare-and-set does. Clients then contend for one resource, as in
	// the AWS Architecture Blog's "Exponential Backoff And Jitter".
	Conflicts bool
	// Outages are windows of virtual time in which the server does not
	// answer as the model says: see [Outage]. They may overlap; the first
	// listed that covers a call's arrival applies.
	Outages []Outage
}

// Resize is a change of a [Server]'s Workers at virtual time At since the
// start of the run: a dependency whose capacity doubles (a scale-out) or
// halves (a failed replica).
type Resize struct {
	At      time.Duration
	Workers int
}

// Outage is a window of virtual time, from Start (included) to End
// (excluded), since the start of the run, in which calls that arrive fail
// or hang, as Mode says.
type Outage struct {
	Start, End time.Duration
	Mode       OutageMode
}

// OutageMode is what an [Outage] does to the calls that arrive in it.
type OutageMode int

const (
	// Down fails each call at once with [ErrDown] (a refused connection,
	// a 503).
	Down OutageMode = iota
	// Hang never answers: the call waits until its caller gives up, and
	// takes no share of the server.
	Hang
)

// String returns "down" or "hang".
func (m OutageMode) String() string {
	switch m {
	case Down:
		return "down"
	case Hang:
		return "hang"
	}
	return fmt.Sprintf("OutageMode(%d)", int(m))
}

// Validate reports the first invalid field of s, or nil.
func (s Server) Validate() error {
	switch {
	case s.Base < 0:
		return fmt.Errorf("sim: Server.Base must be >= 0, got %v", s.Base)
	case s.Slope < 0:
		return fmt.Errorf("sim: Server.Slope must be >= 0, got %v", s.Slope)
	case s.Noise < 0:
		return fmt.Errorf("sim: Server.Noise must be >= 0, got %v", s.Noise)
	case s.Capacity < 0:
		return fmt.Errorf("sim: Server.Capacity must be >= 0, got %d", s.Capacity)
	case !(s.Slow >= 0 && s.Slow <= 1):
		return fmt.Errorf("sim: Server.Slow must be in [0, 1], got %v", s.Slow)
	case s.Slow > 0 && s.SlowLatency <= 0:
		return fmt.Errorf("sim: Server.SlowLatency must be > 0 with Slow %v, got %v", s.Slow, s.SlowLatency)
	case s.SlowLatency < 0:
		return fmt.Errorf("sim: Server.SlowLatency must be >= 0, got %v", s.SlowLatency)
	case s.Workers < 0:
		return fmt.Errorf("sim: Server.Workers must be >= 0, got %d", s.Workers)
	case len(s.Resizes) > 0 && s.Workers == 0:
		return fmt.Errorf("sim: Server.Resizes need Server.Workers >= 1, got 0")
	}
	for i, r := range s.Resizes {
		switch {
		case r.Workers < 1:
			return fmt.Errorf("sim: Server.Resizes[%d].Workers must be >= 1, got %d", i, r.Workers)
		case r.At < 0 || i > 0 && r.At < s.Resizes[i-1].At:
			return fmt.Errorf("sim: Server.Resizes[%d].At must be >= 0 and in order, got %v", i, r.At)
		}
	}
	for i, o := range s.Outages {
		switch {
		case o.Start < 0 || o.End < o.Start:
			return fmt.Errorf("sim: Server.Outages[%d] needs 0 <= Start <= End, got Start %v, End %v", i, o.Start, o.End)
		case o.Mode != Down && o.Mode != Hang:
			return fmt.Errorf("sim: Server.Outages[%d].Mode must be Down or Hang, got %d", i, int(o.Mode))
		}
	}
	return nil
}

// server is a Server in a run.
type server struct {
	Server
	w        *world
	rec      *recorder
	rng      *rand.Rand // for Noise
	slowRng  *rand.Rand // for Slow
	inFlight int
	version  uint64 // the record's, with Conflicts
	// free holds, for each worker, the virtual time from which it is
	// free, as a min-heap; resized counts the Resizes applied.
	free    []time.Duration
	resized int
}

func newServer(s Server, w *world, rec *recorder, rng, slowRng *rand.Rand) *server {
	if s.Base == 0 {
		s.Base = 10 * time.Millisecond
	}
	return &server{Server: s, w: w, rec: rec, rng: rng, slowRng: slowRng, free: make([]time.Duration, s.Workers)}
}

// serve returns when a call that arrives at now and takes latency, once a
// worker has it, is done: at once with no Workers, else after the first
// worker free, which it then holds until then. w.mu must be held.
func (s *server) serve(now, latency time.Duration) time.Duration {
	if s.Workers == 0 {
		return s.w.after(latency)
	}
	for s.resized < len(s.Resizes) && s.Resizes[s.resized].At <= now {
		n := s.Resizes[s.resized].Workers
		s.resized++
		slices.Sort(s.free)
		if n < len(s.free) {
			s.free = s.free[:n] // the workers free last retire once done
		}
		for len(s.free) < n {
			s.free = append(s.free, now)
		}
		heap.Init((*durations)(&s.free))
	}
	start := max(s.free[0], now)
	done := start + latency
	if latency > math.MaxInt64-start {
		done = math.MaxInt64
	}
	s.free[0] = done
	heap.Fix((*durations)(&s.free), 0)
	return done
}

// durations is a min-heap of virtual times.
type durations []time.Duration

func (h durations) Len() int           { return len(h) }
func (h durations) Less(i, j int) bool { return h[i] < h[j] }
func (h durations) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *durations) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *durations) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// call is the op of every simulated call: it runs on the proc that holds
// the baton.
func (s *server) call(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.w.enter() // an attempt of a hedge, say, runs on a goroutine of its own
	if err := ctx.Err(); err != nil {
		return err
	}
	latency, done, read, err := s.arrive()
	switch {
	case err != nil:
		return err
	case latency < 0: // a Hang outage
		return s.w.sleep(ctx, math.MaxInt64)
	}
	sleepErr := s.w.sleep(ctx, latency)
	// The state of the run changes under w.mu: a goroutine of the pipeline
	// may end without giving the baton back (see world.step), and the
	// next holder reads what it wrote.
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	if sleepErr != nil {
		// The caller gave up; the work goes on until it is done.
		s.w.scheduleLocked(&event{fn: s.finish, index: -1}, done)
		return sleepErr
	}
	s.inFlight--
	if s.Conflicts {
		if s.version != read {
			s.rec.conflict(s.w.now)
			return ErrConflict
		}
		s.version++
	}
	return nil
}

// arrive counts a call's arrival and decides its fate: the latency it
// takes, the virtual time its work is done and the record's version it
// read, or a latency < 0 if it hangs, or the error it fails with at once.
func (s *server) arrive() (latency, done time.Duration, read uint64, err error) {
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	now := s.w.now
	s.rec.arrive(now)
	for _, o := range s.Outages {
		if now < o.Start || now >= o.End {
			continue
		}
		if o.Mode == Hang {
			return -1, 0, 0, nil
		}
		s.rec.down(now)
		return 0, 0, 0, ErrDown
	}
	if s.Capacity > 0 && s.inFlight >= s.Capacity {
		s.rec.overloaded(now)
		return 0, 0, 0, ErrOverloaded
	}
	latency = s.Base + time.Duration(s.inFlight)*s.Slope
	if s.Noise > 0 {
		latency = max(latency+time.Duration(s.rng.NormFloat64()*float64(s.Noise)), 0)
	}
	if s.Slow > 0 && s.slowRng.Float64() < s.Slow {
		latency += s.SlowLatency
	}
	s.inFlight++
	s.rec.inFlight(now, s.inFlight)
	done = s.serve(now, latency)
	return done - now, done, s.version, nil
}

// finish ends a call whose caller gave up.
func (s *server) finish() { s.inFlight-- }
