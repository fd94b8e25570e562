// Package pipeline builds resilience pipelines from a document, JSON or
// YAML, and reloads them live, keeping the state of their guards.
//
// A document names shared guards (breakers, bulkheads, rate limiters,
// adaptive limiters, throttlers) and pipelines, each an ordered list of
// layers, outermost first; a layer is a policy of its own (retry, timeout,
// hedge, or a kind added with [WithKind]) or a guard by name:
//
//	{
//	  "guards": {
//	    "pricing-breaker": {"kind": "breaker", "config": {"Threshold": 5, "Cooldown": "10s"}},
//	    "pricing-limit":   {"kind": "ratelimit", "config": {"Rate": 100, "Burst": 20}}
//	  },
//	  "pipelines": {
//	    "pricing": [
//	      {"kind": "retry", "config": {"Attempts": 3}},
//	      {"guard": "pricing-breaker"},
//	      {"guard": "pricing-limit"},
//	      {"kind": "timeout", "config": {"Duration": "200ms"}}
//	    ]
//	  }
//	}
//
// A layer's or guard's "config" is that kind's Config as its JSON form
// (breaker.Config, retry.Config, ...: Go field names, durations as "250ms",
// Off as -1 or "off"). A guard from a document has no constructor
// argument to default to: a bulkhead needs MaxConcurrent, a rate limiter
// Rate (and Burst with a finite Rate), a timeout Duration, a hedge Delay.
// A guard's Name defaults to its name in the document. A rate limiter with
// a MaxWait waits for its token (ratelimit.WaitPolicy); without one it
// refuses at once (ratelimit.Policy).
//
// Each error names the JSON path of its fault:
// "pipelines.pricing[3].config.Duration: timeout: Duration must be set".
//
// [Build] builds a document once. A [Set] holds a document's pipelines and
// reloads them with [Set.Apply]: a call through [Set.Policy] runs on the
// version current when it starts, a guard whose name and kind stay keeps
// its state and takes its new live settings (a breaker's Threshold, a
// bulkhead's MaxConcurrent, a rate limiter's Rate and Burst), a document
// that changes any other setting of a running guard is rejected
// ([ErrNotLive]), and an invalid document changes nothing.
//
// YAML: convert it to JSON (sigs.k8s.io/yaml's YAMLToJSON, for one) and
// call [Parse], which rejects unknown keys; or decode it into a
// [Document] with a YAML library that honours json tags. The package
// itself reads only JSON and depends on the standard library alone.
package pipeline
