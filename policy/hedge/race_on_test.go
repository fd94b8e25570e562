//go:build race

package hedge_test

// raceEnabled: the race detector makes sync.Pool drop kept values at
// random, so allocation counts do not hold under it.
const raceEnabled = true
