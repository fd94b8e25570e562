module github.com/f0b5b96b/resilience/examples/pipelineyaml

go 1.26.0

replace github.com/f0b5b96b/resilience => ../../

require (
	github.com/f0b5b96b/resilience v0.1.0
	sigs.k8s.io/yaml v1.6.0
)

require go.yaml.in/yaml/v2 v2.4.2 // indirect
