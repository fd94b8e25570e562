package export

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSeries: Get makes a key's series once and returns it ever after,
// Load finds only what Get made, Each visits every series.
func TestSeries(t *testing.T) {
	var s Series[string, int]
	if v := s.Load("a"); v != nil {
		t.Fatalf("Load of an empty Series = %v, want nil", *v)
	}
	made := 0
	mk := func(k string) *int { made++; v := len(k); return &v }
	a := s.Get("a", mk)
	if got := s.Get("a", mk); got != a {
		t.Errorf("second Get returned another series")
	}
	s.Get("bb", mk)
	if made != 2 {
		t.Errorf("mk ran %d times, want 2", made)
	}
	if s.Load("a") != a {
		t.Errorf("Load(a) is not Get's series")
	}
	got := map[string]int{}
	s.Each(func(k string, v *int) { got[k] = *v })
	if diff := cmp.Diff(map[string]int{"a": 1, "bb": 2}, got); diff != "" {
		t.Errorf("Each mismatch (-want +got):\n%s", diff)
	}
}

// TestSeriesConcurrent: goroutines racing for one key get the one series.
func TestSeriesConcurrent(t *testing.T) {
	var s Series[int, int]
	const n = 8
	got := make([]*int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i] = s.Get(1, func(int) *int { return new(int) }) })
	}
	wg.Wait()
	for i, v := range got {
		if v != got[0] {
			t.Errorf("goroutine %d got another series", i)
		}
	}
}

// TestSeriesGetAllocs: a Get of a key seen before allocates nothing.
func TestSeriesGetAllocs(t *testing.T) {
	var s Series[string, int]
	mk := func(string) *int { return new(int) }
	s.Get("a", mk)
	if n := testing.AllocsPerRun(100, func() { s.Get("a", mk) }); n != 0 {
		t.Errorf("Get of a known key: %v allocs, want 0", n)
	}
}
