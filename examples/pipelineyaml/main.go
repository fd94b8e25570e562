// Command pipelineyaml builds resilience pipelines from a YAML document:
// sigs.k8s.io/yaml converts the YAML to JSON, and pipeline.Parse reads
// it, rejecting unknown keys with their path. It is a module of its own
// so that the root module keeps no dependency on a YAML library.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/f0b5b96b/resilience/pipeline"
	"sigs.k8s.io/yaml"
)

const document = `
guards:
  pricing-breaker:
    kind: breaker
    config:
      Threshold: 5
      Cooldown: 10s
pipelines:
  pricing:
    - kind: retry
      config:
        Attempts: 3
    - guard: pricing-breaker
    - kind: timeout
      config:
        Duration: 200ms
`

// load reads a YAML document into a pipeline.Document.
func load(y []byte) (pipeline.Document, error) {
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		return pipeline.Document{}, err
	}
	return pipeline.Parse(j)
}

func main() {
	doc, err := load([]byte(document))
	if err != nil {
		log.Fatal(err)
	}
	ps, err := pipeline.Build[string](doc)
	if err != nil {
		log.Fatal(err)
	}
	p := ps.Policies["pricing"]
	v, err := p.Do(context.Background(), func(context.Context) (string, error) { return "42.00", nil })
	fmt.Println(p)
	fmt.Println(v, err)
}
