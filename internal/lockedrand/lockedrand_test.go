package lockedrand

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

func TestSameNumbersAsTheSource(t *testing.T) {
	want := rand.New(rand.NewPCG(1, 2))
	got := New(rand.New(rand.NewPCG(1, 2)))
	for i := range 100 {
		if w, g := want.Uint64N(1000), got.Uint64N(1000); w != g {
			t.Fatalf("draw %d = %d, want %d", i, g, w)
		}
	}
	if New(nil) != nil || Float64(nil) != nil {
		t.Fatal("New(nil) or Float64(nil) is not nil")
	}
}

// Run under -race: without the lock, concurrent draws race on the PCG.
func TestConcurrentDrawsGiveTheSourcesNumbers(t *testing.T) {
	const n, per = 8, 200
	f := Float64(rand.New(rand.NewPCG(3, 4)))
	var mu sync.Mutex
	var got []float64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for range per {
				v := f()
				mu.Lock()
				got = append(got, v)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	ref := rand.New(rand.NewPCG(3, 4))
	want := make([]float64, n*per)
	for i := range want {
		want[i] = ref.Float64()
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatal("concurrent draws are not the source's numbers")
	}
}
