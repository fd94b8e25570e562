package bench

import (
	"sync/atomic"
	"testing"
)

// BenchmarkMachine is no library's: it measures how much the machine gains
// from running goroutines in parallel, to read the parallel rows by. Each
// call is a chain of 20 dependent multiplications, touching no shared
// memory, serially and from b.RunParallel's goroutines; on GOMAXPROCS full
// cores the parallel ns/op is the serial one over GOMAXPROCS.
func BenchmarkMachine(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		var s uint64
		for i := 0; b.Loop(); i++ {
			s += mix(uint64(i))
		}
		sink.Add(s)
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			var s, i uint64
			for pb.Next() {
				s += mix(i)
				i++
			}
			sink.Add(s)
		})
	})
}

var sink atomic.Uint64

// mix is 20 steps of a linear congruential generator.
func mix(x uint64) uint64 {
	for range 20 {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}
