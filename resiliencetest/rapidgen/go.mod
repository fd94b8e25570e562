module github.com/f0b5b96b/resilience/resiliencetest/rapidgen

go 1.26.0

replace github.com/f0b5b96b/resilience => ../../

require (
	github.com/f0b5b96b/resilience v0.1.0
	pgregory.net/rapid v1.3.0
)

require github.com/google/go-cmp v0.7.0
