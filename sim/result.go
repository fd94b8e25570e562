package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/breaker"
)

// Totals count what happened in a run, or in a window of it.
type Totals struct {
	// Client calls, counted when they end: each is one call of the
	// pipeline by a client, however many attempts it made.
	Calls     int
	Successes int // calls that returned no error
	Refused   int // calls that failed with an error matching resilience.ErrRefused (a guard's refusal)
	Failures  int // calls that failed with any other error
	// Unfinished counts the client calls still in progress when the run
	// ended (a dependency that hangs to the end, say), in the bucket where
	// the run ended; they are not in Calls, nor in the latencies.
	Unfinished int

	// Server calls, counted when they arrive: the attempts that reached
	// the server, the refused ones included.
	ServerCalls int
	Overloaded  int // server calls refused for Capacity (ErrOverloaded)
	Down        int // server calls failed by a Down outage (ErrDown)
	Conflicts   int // server calls that lost a write conflict (ErrConflict)
}

// Amplification is ServerCalls / Calls: how many calls the server gets for
// each call of the clients (retries, hedges), 0 when there were no calls.
func (t Totals) Amplification() float64 {
	if t.Calls == 0 {
		return 0
	}
	return float64(t.ServerCalls) / float64(t.Calls)
}

func (t *Totals) add(u Totals) {
	t.Calls += u.Calls
	t.Successes += u.Successes
	t.Refused += u.Refused
	t.Failures += u.Failures
	t.Unfinished += u.Unfinished
	t.ServerCalls += u.ServerCalls
	t.Overloaded += u.Overloaded
	t.Down += u.Down
	t.Conflicts += u.Conflicts
}

// Result is the outcome of one run of one policy set.
type Result struct {
	Name     string        // the policy set's
	Scenario string        // the scenario's
	Duration time.Duration // the scenario's length, virtual time
	Totals                 // over the whole run

	// Finished is the virtual time at which the last client call ended.
	Finished time.Duration

	// Bucket is the width of each entry of the series below, which cover
	// the run from its start: entry i covers [i×Bucket, (i+1)×Bucket).
	Bucket time.Duration
	// Series are the totals of each bucket.
	Series []Totals
	// InFlight is the most server calls in progress at once in each
	// bucket.
	InFlight []int
	// Breaker is the state of the breaker given to [Env.Watch] at the end
	// of each bucket (the last one, which Duration may cut short, ends
	// with the run), or nil if none was watched.
	Breaker []breaker.State

	// Latencies are the client calls' latencies (from the start of the
	// call of the pipeline to its end, virtual time), in the order the
	// calls ended. See [Result.Latency].
	Latencies []time.Duration

	// Outages are the server's, and Clients the scenario's groups of
	// clients, for the plots.
	Outages []Outage
	Clients []Clients
}

// Window returns the totals of the buckets that start in [from, to).
func (r *Result) Window(from, to time.Duration) Totals {
	var t Totals
	for i, b := range r.Series {
		if at := time.Duration(i) * r.Bucket; at >= from && at < to {
			t.add(b)
		}
	}
	return t
}

// Latency returns the q-quantile (0 <= q <= 1) of the client calls'
// latencies, by the nearest-rank method: Latency(0.5) is the median,
// Latency(0.99) the 99th percentile. It returns 0 when there were no
// calls, and panics if q is outside [0, 1].
func (r *Result) Latency(q float64) time.Duration {
	if q < 0 || q > 1 || q != q {
		panic(fmt.Sprintf("sim: Result.Latency(%v): q must be in [0, 1]", q))
	}
	if len(r.Latencies) == 0 {
		return 0
	}
	s := slices.Clone(r.Latencies)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(i, 0)]
}

// SuccessRate is Successes / Calls, over the calls that ended, 0 when none
// did. Calls still in progress when the run ended are in Unfinished: in a
// steady run every client has one, but a run whose calls hang to its end
// shows them there, not here.
func (t Totals) SuccessRate() float64 {
	if t.Calls == 0 {
		return 0
	}
	return float64(t.Successes) / float64(t.Calls)
}

// recorder fills a Result as a run goes.
type recorder struct {
	r *Result
}

func newRecorder(r *Result, buckets int) *recorder {
	r.Series = make([]Totals, buckets)
	r.InFlight = make([]int, buckets)
	return &recorder{r: r}
}

// bucket returns the series entry of virtual time at (the last one for
// times at or past the end).
func (rec *recorder) bucket(at time.Duration) int {
	return min(int(at/rec.r.Bucket), len(rec.r.Series)-1)
}

func (rec *recorder) arrive(at time.Duration) {
	rec.r.ServerCalls++
	rec.r.Series[rec.bucket(at)].ServerCalls++
}

func (rec *recorder) overloaded(at time.Duration) {
	rec.r.Overloaded++
	rec.r.Series[rec.bucket(at)].Overloaded++
}

func (rec *recorder) down(at time.Duration) {
	rec.r.Down++
	rec.r.Series[rec.bucket(at)].Down++
}

func (rec *recorder) conflict(at time.Duration) {
	rec.r.Conflicts++
	rec.r.Series[rec.bucket(at)].Conflicts++
}

func (rec *recorder) inFlight(at time.Duration, n int) {
	i := rec.bucket(at)
	rec.r.InFlight[i] = max(rec.r.InFlight[i], n)
}

// unfinished counts a client call cut short by the end of the run, at at.
func (rec *recorder) unfinished(at time.Duration) {
	t := Totals{Unfinished: 1}
	rec.r.Totals.add(t)
	rec.r.Series[rec.bucket(at)].add(t)
}

// end counts a client call that ended at at with err, after took.
func (rec *recorder) end(at, took time.Duration, err error) {
	rec.r.Latencies = append(rec.r.Latencies, took)
	var t Totals
	t.Calls = 1
	switch {
	case err == nil:
		t.Successes = 1
	case errors.Is(err, resilience.ErrRefused):
		t.Refused = 1
	default:
		t.Failures = 1
	}
	rec.r.Totals.add(t)
	rec.r.Series[rec.bucket(at)].add(t)
	rec.r.Finished = max(rec.r.Finished, at)
}
