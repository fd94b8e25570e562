module github.com/f0b5b96b/resilience/resiliencetest/rapidgen

go 1.25

replace github.com/f0b5b96b/resilience => ../..

require (
	github.com/f0b5b96b/resilience v0.0.0-00010101000000-000000000000
	pgregory.net/rapid v1.3.0
)
