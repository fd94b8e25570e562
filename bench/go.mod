module github.com/f0b5b96b/resilience/bench

go 1.26.0

replace github.com/f0b5b96b/resilience => ../

require (
	github.com/f0b5b96b/resilience v0.1.0
	github.com/failsafe-go/failsafe-go v0.9.8
	github.com/google/go-cmp v0.7.0
	github.com/sony/gobreaker/v2 v2.4.0
	golang.org/x/sync v0.25.0
	golang.org/x/time v0.16.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/influxdata/tdigest v0.0.1 // indirect
)
