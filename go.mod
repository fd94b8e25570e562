module github.com/f0b5b96b/resilience

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	pgregory.net/rapid v1.3.0
)

require go.uber.org/goleak v1.3.0
