module github.com/f0b5b96b/resilience/examples/propertytest

go 1.25

replace (
	github.com/f0b5b96b/resilience => ../..
	github.com/f0b5b96b/resilience/resiliencetest/rapidgen => ../../resiliencetest/rapidgen
)

require (
	github.com/f0b5b96b/resilience v0.0.0-00010101000000-000000000000
	github.com/f0b5b96b/resilience/resiliencetest/rapidgen v0.0.0-00010101000000-000000000000
	pgregory.net/rapid v1.3.0
)
