package dashboard

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/f0b5b96b/resilience/clock"
	"github.com/f0b5b96b/resilience/policy/breaker"
	"github.com/f0b5b96b/resilience/telemetry"
)

// benchDashboard is a dashboard of n breakers, each with a Measure layer
// that has had calls in the last 10 s, a Counter, and a pipeline per 10
// breakers.
func benchDashboard(b *testing.B, n int, real bool) (*Dashboard, *clock.Fake) {
	f := clock.NewFake()
	var events telemetry.Counter
	reg := telemetry.NewRegistry()
	d := New(reg, &Options{Counter: &events, Clock: f})
	ctx := context.Background()
	for i := range n {
		name := fmt.Sprintf("dependency-%05d", i)
		var g telemetry.Guard
		if real {
			br := breaker.New(breaker.WithName(name), breaker.WithClock(f), breaker.WithObserver(&events), breaker.WithFailureRatio(0.5), breaker.WithWindowCalls(20))
			if i%50 == 0 {
				br.ForceOpen()
			}
			g = br
		} else {
			fg := newFake(breaker.Kind, name)
			fg.s.State = telemetry.StateClosed
			g = fg
		}
		if err := reg.Register(g); err != nil {
			b.Fatal(err)
		}
		m := Measure[int](d, name)
		for j := range 5 {
			_, _ = m.Do(ctx, op(f, time.Duration(j+1)*time.Millisecond, nil))
		}
		if i%10 == 0 {
			if err := reg.RegisterPipeline(name, m); err != nil {
				b.Fatal(err)
			}
		}
	}
	return d, f
}

// BenchmarkSnapshot5000 is the work of one Interval for 5 000 guards:
// read the registry (5 000 breakers' Snapshot), the meters and the
// Counter, derive the rates, order the tiles and encode the update that
// every client is sent. fake-guards leaves the breakers out: the
// dashboard's own share.
func BenchmarkSnapshot5000(b *testing.B) {
	for _, c := range []struct {
		name string
		real bool
	}{{"breakers", true}, {"fake-guards", false}} {
		b.Run(c.name, func(b *testing.B) {
			d, f := benchDashboard(b, 5000, c.real)
			now := f.Now()
			d.current(now, false)
			b.ReportAllocs()
			var size int
			cpu := cpuTime()
			for b.Loop() {
				now = now.Add(Interval)
				d.read(now, false, func(u []byte, _ uint64) { size = len(u) })
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(size), "bytes/snapshot")
		})
		b.Run(c.name+"/registry-only", func(b *testing.B) {
			d, _ := benchDashboard(b, 5000, c.real)
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				d.reg.Snapshots()
				d.reg.Pipelines()
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkFullSnapshot5000 is the snapshot a client gets when it
// connects: the update and every tile's two-minute history.
func BenchmarkFullSnapshot5000(b *testing.B) {
	d, f := benchDashboard(b, 5000, true)
	now := f.Now()
	for range HistoryLen {
		now = now.Add(Interval)
		d.current(now, false)
	}
	b.ReportAllocs()
	var size int
	cpu := cpuTime()
	for b.Loop() {
		d.mu.Lock()
		size = len(d.appendSnapshot(make([]byte, 0, size), true))
		d.mu.Unlock()
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(size), "bytes/snapshot")
}
