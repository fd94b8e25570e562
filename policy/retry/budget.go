package retry

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/internal/jsonconf"
)

// BudgetConfig configures a [Budget]. A zero field means the field's
// default, stated at each field, so BudgetConfig{} is the default budget,
// Finagle's default RetryBudget: Ratio 0.2, MinPerSecond 10, Window 10 s.
// Ratio and MinPerSecond can each be switched off with resilience.Off, not
// both.
//
// A BudgetConfig reads and writes JSON ([BudgetConfig.MarshalJSON]), with
// Window as a Go duration string; Clock is not serialised.
type BudgetConfig struct {
	// Ratio is how many retries the budget allows per execution over the
	// window: 0.2 allows one retry for every five executions. It must be
	// finite and > 0; 0 means 0.2. resilience.Off switches the ratio off:
	// only the floor, MinPerSecond, allows retries.
	Ratio float64

	// MinPerSecond is the floor: retries per second allowed whatever the
	// number of executions, so that a dependency called rarely can still
	// be retried. Over the window it allows MinPerSecond × Window (in
	// seconds) retries. It must be finite and > 0; 0 means 10.
	// resilience.Off switches the floor off: only Ratio allows retries.
	MinPerSecond float64

	// Window is the length of the sliding window over which executions and
	// retries are counted. It slides in steps of Window/10. It must be > 0;
	// 0 means 10 s.
	Window time.Duration

	// Clock is the source of time for the window. nil means clock.Real().
	Clock clock.Clock
}

// The defaults of BudgetConfig's fields: Finagle's.
const (
	defaultBudgetRatio        = 0.2
	defaultBudgetMinPerSecond = 10
	defaultBudgetWindow       = 10 * time.Second
)

// Validate reports whether c is a valid budget configuration: nil if it is,
// else an error naming the first field at fault and its value, the same
// message [NewBudget] panics with. BudgetConfig{} is valid.
func (c BudgetConfig) Validate() error {
	switch {
	case !validRate(c.Ratio):
		return fmt.Errorf("retry: BudgetConfig.Ratio must be finite and > 0, 0 (the default, 0.2) or Off (-1, no ratio), got %v", c.Ratio)
	case !validRate(c.MinPerSecond):
		return fmt.Errorf("retry: BudgetConfig.MinPerSecond must be finite and > 0, 0 (the default, 10) or Off (-1, no floor), got %v", c.MinPerSecond)
	case c.Window < 0:
		return fmt.Errorf("retry: BudgetConfig.Window must be > 0, or 0 (the default, 10s), got %v", c.Window)
	case c.Ratio == resilience.Off && c.MinPerSecond == resilience.Off:
		return errors.New("retry: BudgetConfig allows no retry at all: Ratio and MinPerSecond are both Off")
	}
	return nil
}

// validRate reports whether x is a valid Ratio or MinPerSecond: finite and
// >= 0, or Off.
func validRate(x float64) bool {
	return x == resilience.Off || x >= 0 && !math.IsInf(x, 1)
}

// resolved returns c with every default filled in and Off as 0.
func (c BudgetConfig) resolved() BudgetConfig {
	c.Ratio = rate(c.Ratio, defaultBudgetRatio)
	c.MinPerSecond = rate(c.MinPerSecond, defaultBudgetMinPerSecond)
	if c.Window == 0 {
		c.Window = defaultBudgetWindow
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	return c
}

func rate(x, dflt float64) float64 {
	switch x {
	case 0:
		return dflt
	case resilience.Off:
		return 0
	}
	return x
}

// MarshalJSON writes c as a JSON object of its non-zero fields, by their Go
// names: Window as a Go duration string ("10s"), Off as -1. Clock is left
// out.
func (c BudgetConfig) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads what [BudgetConfig.MarshalJSON] writes into c: the
// fields present set c's, absent or null ones leave c's as they are. An
// unknown field, or a Window that is not a Go duration string, is an error
// naming the field. It does not validate: call [BudgetConfig.Validate].
func (c *BudgetConfig) UnmarshalJSON(data []byte) error {
	// jsonconf reads field by field: passing c itself does not recurse.
	return jsonconf.Unmarshal("retry", data, c)
}

// Budgeter is a retry budget as a retry policy uses it: [Budget], the
// budget of one process, implements it, and so may a budget shared by a
// fleet of processes (resilienceredis.RetryBudget keeps one in Redis), or
// any bound of your own. [WithBudget] takes one.
//
// The policy calls Deposit once per execution, before its first attempt,
// and Withdraw before each retry, after every other reason to give up has
// been checked; a retry that Withdraw denies ends the execution with an
// [Error] matching [ErrBudgetExhausted]. Both are called on the caller's
// goroutine, from every execution of every policy that shares the budget:
// they must be safe for simultaneous use and must not block (no network
// round trip: a remote budget decides from what it last learnt). Deposit
// is on the path of every execution, the successful ones included: it
// should cost an atomic add and no allocation.
type Budgeter interface {
	// Deposit counts one execution.
	Deposit()
	// Withdraw reports whether one more retry is allowed now, and counts
	// it if so.
	Withdraw() bool
}

var _ Budgeter = (*Budget)(nil)

// budgetBuckets is the number of buckets of a Budget's sliding window.
const budgetBuckets = 10

// Budget is a retry budget: a bound, shared by every retry policy that calls
// one dependency, on the retries they make together. Over any sliding window
// of [BudgetConfig.Window], retries may be at most Ratio times the
// executions counted in the window plus the floor MinPerSecond × Window.
// When retries are cheap a retry policy retries as configured; when a
// dependency fails for everyone, the budget keeps a fleet of clients from
// multiplying the load on it by their attempt count (the difference between
// a load of 3× and 1.2× with 3 attempts and Ratio 0.2).
//
// This is the retry budget of Finagle (com.twitter.finagle.service.RetryBudget:
// a percentage of requests over a time window plus a minimum of retries per
// second); Envoy's retry budget bounds the same ratio over active requests
// instead of a time window.
//
// A retry policy configured with [WithBudget] counts each execution (once,
// however many attempts it makes: [Budget.Deposit]) and asks the budget
// before each retry ([Budget.Withdraw]); a denied retry ends the execution
// with an [Error] that matches [ErrBudgetExhausted]. Counting an execution
// is lock-free and does not allocate; asking for a retry takes a short
// lock. A Budget is a [Budgeter]; so is a budget shared by a fleet.
//
// Create a Budget with [NewBudget]; the zero Budget is not usable. A Budget
// is safe for simultaneous use by multiple goroutines.
type Budget struct {
	ratio   float64
	reserve float64       // MinPerSecond × Window in seconds
	width   time.Duration // length of one bucket
	clock   clock.Clock
	start   time.Time

	mu   sync.Mutex // serialises bucket rotation and retries
	ring [budgetBuckets]bucket
}

// bucket counts the executions and retries of one Window/10 of time.
type bucket struct {
	epoch   atomic.Int64 // index of the bucket's time slot since start
	calls   atomic.Int64 // executions, added without the lock
	retries int64        // guarded by Budget.mu
}

// NewBudget returns a retry budget configured by c, empty: it allows
// retries up to the floor until executions are counted. NewBudget panics
// with the message of [BudgetConfig.Validate] if c is invalid.
func NewBudget(c BudgetConfig) *Budget {
	if err := c.Validate(); err != nil {
		panic(err.Error())
	}
	c = c.resolved()
	return &Budget{
		ratio:   c.Ratio,
		reserve: c.MinPerSecond * c.Window.Seconds(),
		width:   bucketWidth(c.Window),
		clock:   c.Clock,
		start:   c.Clock.Now(),
	}
}

// bucketWidth returns window/budgetBuckets rounded up, without the
// overflow of (window + budgetBuckets - 1) / budgetBuckets near the largest
// Duration (a negative width then made a negative ring index).
func bucketWidth(window time.Duration) time.Duration {
	w := window / budgetBuckets
	if window%budgetBuckets != 0 {
		w++
	}
	return w
}

// epoch returns the index of the current time slot, never negative.
func (b *Budget) epoch() int64 {
	return int64(max(b.clock.Now().Sub(b.start), 0) / b.width)
}

// slot returns the bucket of epoch e, reset if it held an older epoch.
// b.mu must be held.
func (b *Budget) slotLocked(e int64) *bucket {
	s := &b.ring[e%budgetBuckets]
	if s.epoch.Load() < e {
		s.calls.Store(0)
		s.retries = 0
		s.epoch.Store(e)
	}
	return s
}

// Deposit counts one execution: lock-free, with no allocation (it takes
// the lock only when it is the first to enter a new Window/10 of time).
func (b *Budget) Deposit() {
	e := b.epoch()
	s := &b.ring[e%budgetBuckets]
	if s.epoch.Load() < e {
		b.mu.Lock()
		b.slotLocked(e)
		b.mu.Unlock()
	}
	s.calls.Add(1)
}

// Withdraw reports whether one more retry fits the budget now, and counts
// it if so: over the window, retries + 1 <= Ratio × executions + MinPerSecond
// × Window. It takes a short lock and does not allocate.
func (b *Budget) Withdraw() bool {
	e := b.epoch()
	b.mu.Lock()
	defer b.mu.Unlock()
	cur := b.slotLocked(e)
	var calls, retries int64
	for i := range b.ring {
		s := &b.ring[i]
		if s.epoch.Load() > e-budgetBuckets {
			calls += s.calls.Load()
			retries += s.retries
		}
	}
	if float64(retries+1) > b.ratio*float64(calls)+b.reserve {
		return false
	}
	cur.retries++
	return true
}
