// Package bench compares the library with peer libraries (gobreaker,
// failsafe-go, golang.org/x/time/rate, golang.org/x/sync/semaphore) side by
// side in one `go test -bench` run. It is a module of its own so that the
// core module never requires the peers. The comparisons arrive with the
// issues of each policy; bench/README.md holds the table and the command that
// produced it.
package bench
