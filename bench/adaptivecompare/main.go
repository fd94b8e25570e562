// Command adaptivecompare runs one overload scenario, on the real clock,
// through this library's adaptive limiter (each of its algorithms) and
// failsafe-go's adaptivelimiter, side by side, and prints a table of the
// figures.
//
// The dependency is a server with a pool of 8 workers that serve a call
// in about 6ms (6ms plus a normal noise of 1ms, in time.Sleep), first
// come first served: 8 calls at once, about 1333 a second. Calls arrive
// at random (Poisson) at 470 a second, a third of the capacity, then from
// 2s at 4000 a second, three times it; at 5s the server doubles its
// workers to 16 (the load is then 1.5 times its capacity), at 10s it
// halves them to 8 again; the run ends at 13s. Each limiter has a server and an
// arrival stream of its own, and all run at once, so that a slow moment of
// the machine falls on all of them. A call over the limit is refused at
// once (no queue, both sides: ours by default, failsafe-go's through
// TryAcquirePermit); an admitted call is timed from admission to the end
// of its permit.
//
// The figures, as TestOverloadGoals in policy/adaptive measures them in
// the simulator:
//   - to ±25%: how long after the overload the limit entered [6, 10]
//     (within 25% of 8) to stay there until the workers doubled;
//   - p99 ratio: the p99 latency of the admitted calls from 2s after the
//     overload until the workers doubled, over the p99 of the calls of
//     the light load from 0.5s to the overload;
//   - follow double: how long after the workers doubled the limit entered
//     [12, 20] to stay there until they halved;
//   - follow half: how long after they halved the limit entered [6, 10]
//     to stay there until the end.
//
// "never" means the limit was outside the band at the end of the phase.
//
// Usage, from the bench folder:
//
//	go run ./adaptivecompare [-seed n]
//
// It takes about 13 seconds.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"

	"github.com/f0b5b96b/resilience/policy/adaptive"
)

const (
	workers  = 8
	base     = 6 * time.Millisecond
	noise    = time.Millisecond
	light    = 470.0  // calls a second before the overload
	heavy    = 4000.0 // calls a second from the overload on
	overload = 2 * time.Second
	double   = 5 * time.Second
	halve    = 10 * time.Second
	end      = 13 * time.Second
)

// limiter is one side: acquire admits a call or refuses it (false), and
// returns the function that ends its permit; limit reads the limit now.
type limiter struct {
	name    string
	acquire func() (done func(), ok bool)
	limit   func() int
}

func ours(name string, alg adaptive.Algorithm) limiter {
	l := adaptive.New(adaptive.WithAlgorithm(alg))
	ctx := context.Background()
	return limiter{
		name: name,
		acquire: func() (func(), bool) {
			p, err := l.Acquire(ctx)
			if err != nil {
				return nil, false
			}
			return func() { p.Done(nil) }, true
		},
		limit: func() int { return l.Stats().Limit },
	}
}

func failsafe() limiter {
	l := adaptivelimiter.NewWithDefaults[any]()
	return limiter{
		name: "failsafe-go adaptivelimiter",
		acquire: func() (func(), bool) {
			p, ok := l.TryAcquirePermit()
			if !ok {
				return nil, false
			}
			return p.Record, true
		},
		limit: l.Limit,
	}
}

// server is a pool of workers that serve calls first come, first served.
type server struct {
	mu      sync.Mutex
	workers int
	busy    int
	queue   []chan struct{}
}

func (s *server) call(d time.Duration) {
	s.mu.Lock()
	if s.busy < s.workers {
		s.busy++
		s.mu.Unlock()
	} else {
		ch := make(chan struct{})
		s.queue = append(s.queue, ch)
		s.mu.Unlock()
		<-ch // a worker handed over
	}
	time.Sleep(d)
	s.mu.Lock()
	if len(s.queue) > 0 && s.busy <= s.workers {
		ch := s.queue[0]
		s.queue = s.queue[1:]
		close(ch) // the worker goes to the first caller waiting
	} else {
		s.busy--
	}
	s.mu.Unlock()
}

func (s *server) resize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workers = n
	for s.busy < s.workers && len(s.queue) > 0 {
		s.busy++
		close(s.queue[0])
		s.queue = s.queue[1:]
	}
}

type sample struct {
	at time.Duration
	v  float64
}

// result is what a run measured: the limit every 10ms, the latency of
// each admitted call by its end.
type result struct {
	mu     sync.Mutex
	limits []sample
	lat    []sample
}

func run(l limiter, seed uint64, start time.Time, wg *sync.WaitGroup) *result {
	r := &result{}
	srv := &server{workers: workers}
	rng := rand.New(rand.NewPCG(seed, 1))
	var calls sync.WaitGroup
	wg.Add(2)
	go func() { // the limit, every 10ms
		defer wg.Done()
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for now := range t.C {
			at := now.Sub(start)
			if at >= end {
				return
			}
			r.mu.Lock()
			r.limits = append(r.limits, sample{at, float64(l.limit())})
			r.mu.Unlock()
		}
	}()
	go func() { // the arrivals, and the resizes
		defer wg.Done()
		next, resized := time.Duration(0), 0
		for next < end {
			for now := time.Since(start); next <= now && next < end; {
				if resized == 0 && next >= double {
					srv.resize(2 * workers)
					resized++
				} else if resized == 1 && next >= halve {
					srv.resize(workers)
					resized++
				}
				rate := light
				if next >= overload {
					rate = heavy
				}
				next += time.Duration(rng.ExpFloat64() / rate * float64(time.Second))
				d := max(base+time.Duration(rng.NormFloat64()*float64(noise)), 0)
				calls.Add(1)
				go func() {
					defer calls.Done()
					t0 := time.Now()
					done, ok := l.acquire()
					if !ok {
						return
					}
					srv.call(d)
					done()
					t1 := time.Now()
					r.mu.Lock()
					r.lat = append(r.lat, sample{t1.Sub(start), float64(t1.Sub(t0))})
					r.mu.Unlock()
				}()
			}
			time.Sleep(time.Until(start.Add(next)))
		}
		calls.Wait()
	}()
	return r
}

// settle returns how long after from the limit entered [lo, hi] to stay
// there until to; -1 if it was outside at to.
func (r *result) settle(from, to time.Duration, lo, hi float64) time.Duration {
	in := time.Duration(-1)
	for _, s := range r.limits {
		if s.at < from || s.at >= to {
			continue
		}
		switch ok := s.v >= lo && s.v <= hi; {
		case !ok:
			in = -1
		case in < 0:
			in = s.at - from
		}
	}
	return in
}

func (r *result) p99(from, to time.Duration) time.Duration {
	var xs []float64
	for _, s := range r.lat {
		if s.at >= from && s.at < to {
			xs = append(xs, s.v)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return time.Duration(xs[max(int(math.Ceil(0.99*float64(len(xs))))-1, 0)])
}

func main() {
	seed := flag.Uint64("seed", 1, "seed of the arrivals and the service times")
	trace := flag.Bool("trace", false, "also print each limiter's limit every 250ms")
	flag.Parse()
	sides := []limiter{
		ours("resilience Gradient2 (default)", adaptive.Gradient2{}),
		ours("resilience Vegas", adaptive.Vegas{}),
		ours("resilience AIMD", adaptive.AIMD{}),
		failsafe(),
	}
	var wg sync.WaitGroup
	start := time.Now()
	results := make([]*result, len(sides))
	for i, l := range sides {
		results[i] = run(l, *seed+uint64(i), start, &wg)
	}
	wg.Wait()

	d := func(d time.Duration) string {
		if d < 0 {
			return "never"
		}
		return d.Round(10 * time.Millisecond).String()
	}
	c := float64(workers)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "limiter\tto ±25% (≤ 2s)\tp99 ratio (≤ 1.5)\tp99 light\tp99 overload\tfollow double (≤ 5s)\tfollow half (≤ 2s)\tlimit at 4.9s / 9.9s / 12.9s")
	for i, r := range results {
		light, over := r.p99(500*time.Millisecond, overload), r.p99(overload+2*time.Second, double)
		at := func(t time.Duration) float64 {
			v := 0.0
			for _, s := range r.limits {
				if s.at <= t {
					v = s.v
				}
			}
			return v
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%v\t%v\t%s\t%s\t%.0f / %.0f / %.0f\n", sides[i].name,
			d(r.settle(overload, double, 0.75*c, 1.25*c)), float64(over)/float64(light),
			light.Round(10*time.Microsecond), over.Round(10*time.Microsecond),
			d(r.settle(double, halve, 1.5*c, 2.5*c)), d(r.settle(halve, end, 0.75*c, 1.25*c)),
			at(double-100*time.Millisecond), at(halve-100*time.Millisecond), at(end-100*time.Millisecond))
	}
	tw.Flush()
	if *trace {
		for i, r := range results {
			fmt.Printf("%s:", sides[i].name)
			for _, s := range r.limits {
				if s.at%(250*time.Millisecond) < 10*time.Millisecond {
					fmt.Printf(" %.0f", s.v)
				}
			}
			fmt.Println()
		}
	}
}
