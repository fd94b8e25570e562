package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/f0b5b96b/resilience/internal/jsonconf"
)

// Document is a set of pipelines and the guards they share, as read from
// JSON (see [Parse]) or from YAML decoded into the same structs.
//
// Guards maps a guard's name to its kind and configuration; Pipelines maps
// a pipeline's name to its layers, outermost first. A layer is either a
// policy of its own ({"kind": "retry", "config": {...}}) or a reference to
// a guard by name ({"guard": "pricing-breaker"}): every reference to one
// name is the same guard, so a breaker used by two pipelines counts the
// calls of both.
type Document struct {
	Guards    map[string]GuardSpec `json:"guards,omitempty"`
	Pipelines map[string][]Layer   `json:"pipelines,omitempty"`
}

// GuardSpec is a shared guard: its kind ("breaker", "bulkhead",
// "ratelimit", "adaptive" or "throttle") and that kind's Config as JSON
// (breaker.Config, bulkhead.Config, ...). An absent or null config is the
// zero Config.
type GuardSpec struct {
	Kind   string          `json:"kind"`
	Config json.RawMessage `json:"config,omitempty"`
}

// Layer is one layer of a pipeline: either Kind and Config (a policy of
// that kind, built for this pipeline alone: "retry", "timeout", "hedge",
// or a kind given with [WithKind]) or Guard (the name of a guard of the
// Document), never both.
type Layer struct {
	Kind   string          `json:"kind,omitempty"`
	Config json.RawMessage `json:"config,omitempty"`
	Guard  string          `json:"guard,omitempty"`
}

// Error is an error in a document, at a place named by its JSON path:
// "pipelines.pricing[2].config.Duration", "guards.pricing-breaker.kind".
// Err is what is wrong there; it starts with the package that found it
// ("timeout: Duration must be > 0 ...").
type Error struct {
	Path string // the JSON path, keys joined by ".", indexes in brackets
	Err  error
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// ErrUnknownField is matched by the error of a key that a document's
// object, or a layer's or guard's config (at any depth, as a backoff in a
// retry's), does not have; the error's Path ends with that key.
var ErrUnknownField = errors.New("pipeline: unknown field")

func pathErr(path string, err error) *Error { return &Error{Path: path, Err: err} }

func pathErrf(path, format string, args ...any) *Error {
	return &Error{Path: path, Err: fmt.Errorf(format, args...)}
}

// Parse reads a document from JSON. It is strict: a key that the document
// does not have is an error matching [ErrUnknownField], a key given twice
// in one object is an error (encoding/json would keep the last), and every error is
// an [*Error] naming the JSON path of the fault. Parse checks the form,
// not the configurations: [Build] and [Set.Apply] check those.
//
// YAML documents: convert the YAML to JSON (sigs.k8s.io/yaml's YAMLToJSON,
// say) and Parse the result, to keep the strict check of keys; or decode
// the YAML into a Document directly with a library that honours json tags.
func Parse(data []byte) (Document, error) {
	var d Document
	top, err := object("", data, "guards", "pipelines")
	if err != nil {
		return Document{}, err
	}
	if raw, ok := top["guards"]; ok {
		guards, err := objectOf("guards", raw)
		if err != nil {
			return Document{}, err
		}
		d.Guards = make(map[string]GuardSpec, len(guards))
		for _, name := range sortedKeys(guards) {
			p := join("guards", name)
			g, err := object(p, guards[name], "kind", "config")
			if err != nil {
				return Document{}, err
			}
			var spec GuardSpec
			if err := str(p+".kind", g["kind"], &spec.Kind); err != nil {
				return Document{}, err
			}
			spec.Config = nonNull(g["config"])
			d.Guards[name] = spec
		}
	}
	if raw, ok := top["pipelines"]; ok {
		pipes, err := objectOf("pipelines", raw)
		if err != nil {
			return Document{}, err
		}
		d.Pipelines = make(map[string][]Layer, len(pipes))
		for _, name := range sortedKeys(pipes) {
			p := join("pipelines", name)
			var items []json.RawMessage
			if err := json.Unmarshal(pipes[name], &items); err != nil || items == nil {
				return Document{}, pathErrf(p, "pipeline: a pipeline is a JSON array of layers, got %s", brief(pipes[name]))
			}
			layers := make([]Layer, len(items))
			for i, item := range items {
				lp := p + "[" + strconv.Itoa(i) + "]"
				l, err := object(lp, item, "kind", "config", "guard")
				if err != nil {
					return Document{}, err
				}
				if err := str(lp+".kind", l["kind"], &layers[i].Kind); err != nil {
					return Document{}, err
				}
				if err := str(lp+".guard", l["guard"], &layers[i].Guard); err != nil {
					return Document{}, err
				}
				layers[i].Config = nonNull(l["config"])
			}
			d.Pipelines[name] = layers
		}
	}
	return d, nil
}

// object decodes a JSON object at path, rejecting keys not in keys.
func object(path string, raw json.RawMessage, keys ...string) (map[string]json.RawMessage, error) {
	m, err := objectOf(path, raw)
	if err != nil {
		return nil, err
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(keys, k) {
			return nil, pathErr(join(path, k), fmt.Errorf("%w (the keys are %s)", ErrUnknownField, strings.Join(keys, ", ")))
		}
	}
	return m, nil
}

func objectOf(path string, raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		if path == "" {
			path = "$"
		}
		if err != nil && !isTypeError(err) {
			return nil, pathErr(path, fmt.Errorf("pipeline: %w", err))
		}
		return nil, pathErrf(path, "pipeline: a JSON object is expected, got %s", brief(raw))
	}
	if key, dup := jsonconf.DuplicateKey(raw); dup {
		return nil, pathErrf(join(path, key), "pipeline: the key %q appears twice", key)
	}
	return m, nil
}

func isTypeError(err error) bool {
	var te *json.UnmarshalTypeError
	return errors.As(err, &te)
}

// nonNull returns raw, or nil for JSON null: an absent config.
func nonNull(raw json.RawMessage) json.RawMessage {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	return raw
}

func str(path string, raw json.RawMessage, dst *string) error {
	if raw == nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return pathErrf(path, "pipeline: a string is expected, got %s", brief(raw))
	}
	return nil
}

// brief returns raw for an error message, shortened.
func brief(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if s == "" {
		return "nothing"
	}
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

// join appends key to path: "a.b", or `a["x.y"]` for a key that is not a
// plain name.
func join(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
			break
		}
	}
	switch {
	case !plain:
		return path + "[" + strconv.Quote(key) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
