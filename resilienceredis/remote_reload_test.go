package resilienceredis

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fakeReloader counts the calls of ReloadState.
type fakeReloader struct{ n atomic.Int64 }

func (f *fakeReloader) ReloadState(context.Context) { f.n.Add(1) }

// After a failed round trip a guard asks a client that can reload its view
// of a cluster to do so at most once per ProbeInterval (from the last
// time it asked, that instant included).
func TestRemoteReloadAtMostOncePerProbeInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const probe = time.Second
		stop := make(chan struct{})
		defer close(stop)
		f := &fakeReloader{}
		r := remote{probe: probe, reloader: f, stop: stop, reprobe: func() {}}
		t0 := time.Now().UnixNano()
		p := int64(probe)
		var got []int64
		for _, now := range []int64{t0, t0 + 1, t0 + p - 1, t0 + p, t0 + p + 1} {
			r.reload(now)
			r.wg.Wait()
			got = append(got, f.n.Load())
		}
		if diff := cmp.Diff([]int64{1, 1, 1, 2, 2}, got); diff != "" {
			t.Errorf("reloads after failures at t0, t0+1ns, t0+ProbeInterval-1ns, t0+ProbeInterval, +1ns mismatch (-want +got):\n%s", diff)
		}
	})
}

// Shortly after a reload (100ms, or half a ProbeInterval if shorter:
// before ProbeInterval has passed) the guard probes Redis again: its
// reprobe, or else the next decision of every slot that is down may ask
// Redis (probeNow), instead of a ProbeInterval after the failure.
func TestRemoteProbeSoonAfterReload(t *testing.T) {
	for _, probe := range []time.Duration{10 * time.Millisecond, time.Second} {
		t.Run("reprobe/ProbeInterval="+probe.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				stop := make(chan struct{})
				defer close(stop)
				var at []time.Duration
				start := time.Now()
				r := remote{probe: probe, reloader: &fakeReloader{}, stop: stop, reprobe: func() { at = append(at, time.Since(start)) }}
				r.reload(start.UnixNano())
				r.wg.Wait()
				want := min(reloadSettle, probe/2)
				if len(at) != 1 || at[0] != want || at[0] >= probe {
					t.Errorf("reprobe called at %v after the reload; want once, at %v (before ProbeInterval, %v)", at, want, probe)
				}
			})
		})
	}
	t.Run("probeNow", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			stop := make(chan struct{})
			defer close(stop)
			const probe = time.Second
			r := remote{probe: probe, reloader: &fakeReloader{}, stop: stop}
			now := time.Now().UnixNano()
			r.failed(now, noSlot)
			r.reload(now)
			r.wg.Wait()
			if later := time.Now().UnixNano(); later >= now+int64(probe) || !r.usable(later, noSlot) {
				t.Errorf("%v after the failure and the reload (ProbeInterval %v): usable = false", time.Duration(later-now), probe)
			}
		})
	})
	t.Run("probeNow per slot", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			stop := make(chan struct{})
			defer close(stop)
			const probe = time.Second
			r := remote{probe: probe, reloader: &fakeReloader{}, stop: stop, slots: make([]atomic.Int64, clusterSlots)}
			now := time.Now().UnixNano()
			r.failed(now, 7)
			r.reload(now)
			r.wg.Wait()
			later := time.Now().UnixNano()
			if !r.usable(later, 7) || r.usable(later, 7) {
				t.Errorf("slot 7, %v after its failure and the reload (ProbeInterval %v): want one probe", time.Duration(later-now), probe)
			}
		})
	})
}

// A guard being closed does not probe after a reload: the wait for it
// ends with stop.
func TestRemoteReloadStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		called := false
		r := remote{probe: time.Second, reloader: &fakeReloader{}, stop: stop, reprobe: func() { called = true }}
		r.reload(time.Now().UnixNano())
		synctest.Wait()
		close(stop)
		r.wg.Wait()
		if called {
			t.Error("reprobe called after stop")
		}
	})
}
