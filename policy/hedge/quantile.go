package hedge

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

const (
	// window is how many of the latest attempts' latencies the estimator
	// keeps: 8 KiB, and as much again to select in, whatever the traffic.
	window = 1024
	// warmup is how many latencies it needs before it sets the delay.
	warmup = 100
	// every is how often, in latencies recorded, it recomputes the delay.
	every = 32
)

// estimator sets a policy's delay to a quantile of its attempts'
// latencies over the last window attempts: a ring of latencies, written
// lock-free, and an exact selection of the quantile every `every`
// latencies, by whoever records the latency that falls due (others skip
// it rather than wait). It is safe for simultaneous use.
type estimator struct {
	q        float64
	min, max time.Duration // max 0: no upper bound
	n        atomic.Uint64 // latencies recorded
	ring     [window]atomic.Int64
	delay    atomic.Int64 // the current delay

	mu      sync.Mutex // guards scratch
	scratch [window]int64
}

func newEstimator(q float64, min, max, initial time.Duration) *estimator {
	e := &estimator{q: q, min: min, max: max}
	e.delay.Store(int64(e.clamp(initial)))
	return e
}

// clamp returns d within [min, max].
func (e *estimator) clamp(d time.Duration) time.Duration {
	d = max(d, e.min)
	if e.max > 0 {
		d = min(d, e.max)
	}
	return d
}

// current returns the delay to use now.
func (e *estimator) current() time.Duration { return time.Duration(e.delay.Load()) }

// record adds an attempt's latency d, and recomputes the delay when one
// falls due.
func (e *estimator) record(d time.Duration) {
	i := e.n.Add(1)
	e.ring[(i-1)%window].Store(int64(max(d, 0)))
	if i < warmup || i%every != 0 && i != warmup {
		return
	}
	if !e.mu.TryLock() {
		return // another caller recomputes it
	}
	defer e.mu.Unlock()
	n := int(min(i, window))
	s := e.scratch[:n]
	for j := range s {
		s[j] = e.ring[j].Load()
	}
	k := int(math.Ceil(e.q*float64(n))) - 1
	e.delay.Store(int64(e.clamp(time.Duration(selectKth(s, max(k, 0))))))
}

// selectKth returns the k-th smallest element of s (0-based), reordering
// s: Hoare's selection, expected linear time, with the median of three as
// the pivot.
func selectKth(s []int64, k int) int64 {
	lo, hi := 0, len(s)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if s[mid] < s[lo] {
			s[mid], s[lo] = s[lo], s[mid]
		}
		if s[hi] < s[lo] {
			s[hi], s[lo] = s[lo], s[hi]
		}
		if s[hi] < s[mid] {
			s[hi], s[mid] = s[mid], s[hi]
		}
		pivot := s[mid]
		i, j := lo, hi
		for i <= j {
			for s[i] < pivot {
				i++
			}
			for s[j] > pivot {
				j--
			}
			if i <= j {
				s[i], s[j] = s[j], s[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return s[k]
		}
	}
	return s[k]
}

// budget caps a policy's hedges to a fraction of its calls: a token
// bucket in millionths of a hedge, lock-free.
type budget struct {
	per    int64 // added per call
	cap    int64
	tokens atomic.Int64
}

const oneHedge = 1_000_000

func newBudget(fraction float64) *budget {
	fraction = min(fraction, 1e6) // a million hedges per call: no cap that matters
	b := &budget{per: int64(math.Round(fraction * oneHedge))}
	b.cap = int64(max(1, 10*fraction) * oneHedge)
	b.per = max(b.per, 1)
	b.tokens.Store(b.cap)
	return b
}

// deposit adds one call's share.
func (b *budget) deposit() {
	for t := b.tokens.Load(); t < b.cap; t = b.tokens.Load() {
		if b.tokens.CompareAndSwap(t, min(t+b.per, b.cap)) {
			return
		}
	}
}

// withdraw takes one hedge, if the budget holds one.
func (b *budget) withdraw() bool {
	for t := b.tokens.Load(); t >= oneHedge; t = b.tokens.Load() {
		if b.tokens.CompareAndSwap(t, t-oneHedge) {
			return true
		}
	}
	return false
}
