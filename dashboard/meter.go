package dashboard

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/telemetry"
)

// Measure returns a one-layer policy, named "measure(name)", that counts
// and times every call through it for the tile named name on d: the calls
// per second, the error % and the latency percentiles the registry and
// the event Counter do not have. A retry given the dashboard's registry
// as its observer gives the tile of its name the same numbers with no
// layer (its retry.attempt events: see New); use Measure for a chain
// without a retry, and not both for one name (they add up). Put it right
// outside the guard it reports on, inside the retry, so that it sees each
// attempt as the guard does:
//
//	fallback > retry(prices) > measure(prices) > breaker(prices) > timeout
//
// A call through the layer is counted as one of four outcomes: success,
// failure (an error, or a panic, which goes on up), refused (an error
// matching resilience.ErrRefused: a guard inside the layer did not let
// the call through) and canceled (an error while the caller's own ctx is
// done). The durations of successes and failures feed the tile's latency
// percentiles; refused and canceled calls are counted as calls only.
//
// Layers of one name measure into one tile, whatever their T: calls
// through Measure[A](d, "db") and Measure[B](d, "db") add up. The tile
// shows the guards registered under the same name beside these numbers.
//
// The layer describes itself as one that calls the rest of the chain once
// and adds no time (resilience.KindOther), so Policy.Check and
// Policy.Bounds see through it.
//
// Cost per call: two reads of d's clock and one short lock of the name's
// counters; no allocation (but for the histograms, ten in all, made on
// first use and reused). Memory: about 9 KiB per name that has had
// calls (the histograms of the last 10 s). Measure panics if d is nil or
// name is "" or not valid UTF-8 (see telemetry.CheckName).
func Measure[T any](d *Dashboard, name string) resilience.Policy[T] {
	if d == nil {
		panic("dashboard: Measure dashboard must not be nil")
	}
	if name == "" {
		panic("dashboard: Measure name must not be empty")
	}
	telemetry.CheckName("dashboard: Measure", name)
	m := d.meter(name)
	clk := d.clock
	return resilience.New("measure("+name+")", func(ctx context.Context, next resilience.Next[T]) (v T, err error) {
		start := clk.Now()
		done := false
		defer func() {
			if !done { // the op panicked: a failure, and the panic goes on
				end := clk.Now()
				m.record(end, end.Sub(start), failed)
			}
		}()
		v, err = next.Call(ctx)
		done = true
		end := clk.Now()
		m.record(end, end.Sub(start), classify(ctx, err))
		return v, err
	}).Describe(resilience.Layer{Kind: resilience.KindOther})
}

// outcome is what a call through a Measure layer came to.
type outcome int

const (
	succeeded outcome = iota
	failed
	refused
	canceled
)

func classify(ctx context.Context, err error) outcome {
	switch {
	case err == nil:
		return succeeded
	case errors.Is(err, resilience.ErrRefused):
		return refused
	case ctx.Err() != nil:
		return canceled
	}
	return failed
}

// classifyErr is the outcome of an attempt that returned err, as its
// duration event says it (without the caller's context): an error
// matching context.Canceled is the caller's cancellation.
func classifyErr(err error) outcome {
	switch {
	case err == nil:
		return succeeded
	case errors.Is(err, resilience.ErrRefused):
		return refused
	case errors.Is(err, context.Canceled):
		return canceled
	}
	return failed
}

// windowSlices is the number of one-second slices of a meter's window:
// the latency percentiles and the error % are over the current second
// and the 9 before it.
const windowSlices = 10

// slice is one second of a meter's window.
type slice struct {
	ok, failed uint32
	h          *hist // nil until a duration is recorded in this slice
}

// meter holds the counts and durations of the calls through the Measure
// layers of one name.
type meter struct {
	name string
	tile *tile // the tile of name, once a snapshot has found it; under the Dashboard's mu

	mu                     sync.Mutex
	calls, failed, refused uint64 // since the meter was made
	head                   int64  // the Unix second of the newest slice
	slices                 [windowSlices]slice
	window                 *hist  // the sum of the slices' histograms
	windowN                uint64 // the count of window
}

func (m *meter) record(now time.Time, d time.Duration, o outcome) {
	sec := now.Unix()
	m.mu.Lock()
	m.advance(sec)
	m.calls++
	switch o {
	case refused:
		m.refused++
	case succeeded, failed:
		s := &m.slices[slot(m.head)]
		if o == failed {
			m.failed++
			s.failed++
		} else {
			s.ok++
		}
		if s.h == nil {
			s.h = new(hist)
		}
		if m.window == nil {
			m.window = new(hist)
		}
		b := bucketOf(d)
		s.h[b]++
		m.window[b]++
		m.windowN++
	}
	m.mu.Unlock()
}

// advance moves the window to end at second sec, dropping the slices that
// fall out of it. A sec before the head (a clock set back) leaves the
// window as it is: the call counts in the newest slice.
func (m *meter) advance(sec int64) {
	if sec <= m.head {
		return
	}
	n := min(sec-m.head, windowSlices)
	for i := int64(1); i <= n; i++ {
		s := &m.slices[slot(m.head+i)]
		if s.h != nil {
			for b, c := range s.h {
				if c != 0 {
					m.window[b] -= c
					m.windowN -= uint64(c)
					s.h[b] = 0
				}
			}
		}
		s.ok, s.failed = 0, 0
	}
	m.head = sec
}

// slot is the index in a meter's slices of the Unix second sec.
func slot(sec int64) int {
	return int((sec%windowSlices + windowSlices) % windowSlices)
}

// meterRead is what a sample reads from a meter.
type meterRead struct {
	calls, failed, refused uint64 // since the meter was made
	winOK, winFailed       uint64 // in the window
	latency                [3]float64
	hasLatency             bool
}

var percentiles = []float64{0.50, 0.90, 0.99}

func (m *meter) read(now time.Time) meterRead {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.advance(now.Unix())
	r := meterRead{calls: m.calls, failed: m.failed, refused: m.refused}
	for i := range m.slices {
		r.winOK += uint64(m.slices[i].ok)
		r.winFailed += uint64(m.slices[i].failed)
	}
	if m.windowN > 0 {
		m.window.quantiles(m.windowN, percentiles, r.latency[:])
		r.hasLatency = true
	}
	return r
}
