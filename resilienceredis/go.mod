module github.com/f0b5b96b/resilience/resilienceredis

go 1.26.0

replace github.com/f0b5b96b/resilience => ../

require (
	github.com/f0b5b96b/resilience v0.1.0
	github.com/go-redis/redis_rate/v10 v10.0.1
	github.com/google/go-cmp v0.7.0
	github.com/redis/go-redis/v9 v9.23.0
	go.uber.org/goleak v1.3.0
	pgregory.net/rapid v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
)
