module github.com/f0b5b96b/resilience/examples/propertytest

go 1.26.0

replace (
	github.com/f0b5b96b/resilience => ../../
	github.com/f0b5b96b/resilience/resiliencetest/rapidgen => ../../resiliencetest/rapidgen/
)

require (
	github.com/f0b5b96b/resilience v0.1.0
	github.com/f0b5b96b/resilience/resiliencetest/rapidgen v0.1.0
	pgregory.net/rapid v1.3.0
)
