package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/f0b5b96b/resilience"
)

// plan builds the version of d over old without changing anything that
// runs: it returns the new version, the changes, the retunings to make
// when it is swapped in, and the guards it made. On error, nothing it
// made is in use.
func plan[T any](s *settings, d Document, old *version[T]) (v *version[T], changes []Change, tunes []func(), made []*guard, err error) {
	v = &version[T]{
		pipes:  make(map[string]resilience.Policy[T], len(d.Pipelines)),
		specs:  make(map[string]string, len(d.Pipelines)),
		guards: make(map[string]*guard, len(d.Guards)),
	}
	for _, name := range sortedKeys(d.Guards) {
		spec, path := d.Guards[name], join("guards", name)
		if name == "" {
			return nil, nil, nil, nil, pathErr(path, errors.New("pipeline: a guard needs a name"))
		}
		k, ok := guardKinds[spec.Kind]
		if !ok {
			return nil, nil, nil, nil, pathErr(path+".kind", kindError(s, spec.Kind, true))
		}
		cfg, err := k.decode(s, path+".config", spec.Config, name)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		canon, err := canonical(cfg)
		if err != nil {
			return nil, nil, nil, nil, pathErr(path+".config", err)
		}
		g := &guard{kind: spec.Kind, canon: canon, cfg: cfg}
		prev := old.guards[name]
		switch {
		case prev != nil && prev.kind == spec.Kind && prev.canon == canon:
			g = prev
		case prev != nil && prev.kind == spec.Kind:
			fields := changedFields(prev.canon, canon)
			if err := notLive(k, spec.Kind, path, fields); err != nil {
				return nil, nil, nil, nil, err
			}
			g.value = prev.value
			tunes = append(tunes, func() { k.tune(g.value, cfg) })
			changes = append(changes, Change{Path: path, Action: Retuned, Fields: fields})
		default:
			if err := protect(func() error { g.value = k.build(cfg); return nil }); err != nil {
				return nil, nil, nil, nil, configErr[struct{}](path+".config", err)
			}
			made = append(made, g)
			c := Change{Path: path, Action: Added}
			if prev != nil {
				c.Action, c.Fields = Replaced, changedFields(prev.canon, canon)
			}
			changes = append(changes, c)
		}
		v.guards[name] = g
	}
	for _, name := range sortedKeys(old.guards) {
		if _, ok := v.guards[name]; !ok {
			changes = append(changes, Change{Path: join("guards", name), Action: Removed})
		}
	}
	for _, name := range sortedKeys(d.Pipelines) {
		path := join("pipelines", name)
		if name == "" {
			return nil, nil, nil, nil, pathErr(path, errors.New("pipeline: a pipeline needs a name"))
		}
		layers := d.Pipelines[name]
		ps := make([]resilience.Policy[T], len(layers))
		canons := make([]string, len(layers))
		for i, l := range layers {
			lp := path + "[" + strconv.Itoa(i) + "]"
			ps[i], canons[i], err = layer(s, v, lp, l)
			if err != nil {
				return nil, nil, nil, nil, err
			}
		}
		v.pipes[name] = resilience.Then(ps...)
		v.specs[name] = strings.Join(canons, "\n")
		if spec, ok := old.specs[name]; !ok {
			changes = append(changes, Change{Path: path, Action: Added})
		} else if spec != v.specs[name] {
			changes = append(changes, Change{Path: path, Action: Changed})
		}
	}
	for _, name := range sortedKeys(old.specs) {
		if _, ok := v.specs[name]; !ok {
			changes = append(changes, Change{Path: join("pipelines", name), Action: Removed})
		}
	}
	return v, changes, tunes, made, nil
}

// layer builds the layer l at path lp of version v: a reference to one of
// v's guards, or a layer of its own.
func layer[T any](s *settings, v *version[T], lp string, l Layer) (resilience.Policy[T], string, error) {
	var none resilience.Policy[T]
	if l.Guard != "" {
		if l.Kind != "" || len(l.Config) > 0 {
			return none, "", pathErr(lp, errors.New(`pipeline: a layer is {"guard": name} or {"kind": ..., "config": ...}, not both`))
		}
		g := v.guards[l.Guard]
		if g == nil {
			return none, "", pathErr(lp+".guard", fmt.Errorf("pipeline: no guard named %q in guards", l.Guard))
		}
		return guardPolicy[T](g), "guard " + strconv.Quote(l.Guard), nil
	}
	if isLayerKind(l.Kind) {
		p, canon, err := buildLayer[T](s, l.Kind, lp+".config", l.Config)
		return p, l.Kind + " " + canon, err
	}
	b, ok := s.kinds[l.Kind].(func(json.RawMessage) (resilience.Policy[T], error))
	if !ok {
		return none, "", pathErr(lp+".kind", kindError(s, l.Kind, false))
	}
	var p resilience.Policy[T]
	err := protect(func() error {
		var err error
		p, err = b(l.Config)
		return err
	})
	if err != nil {
		return none, "", pathErr(lp+".config", err)
	}
	var compact bytes.Buffer
	if json.Compact(&compact, l.Config) != nil {
		compact.Reset()
		compact.Write(l.Config)
	}
	return p, l.Kind + " " + compact.String(), nil
}

// kindError explains an unknown kind, in guards (guard) or in a
// pipeline's layers.
func kindError(s *settings, kind string, guard bool) error {
	_, isGuard := guardKinds[kind]
	_, isUser := s.kinds[kind]
	switch {
	case kind == "" && guard:
		return fmt.Errorf("pipeline: a guard needs a kind (%s)", guardKindNames())
	case kind == "":
		return errors.New(`pipeline: a layer needs a kind, or a guard: {"guard": name}`)
	case guard && (isLayerKind(kind) || isUser):
		return fmt.Errorf("pipeline: %s is not a guard kind (%s): put it in a pipeline's layers", kind, guardKindNames())
	case guard:
		return fmt.Errorf("pipeline: unknown guard kind %q (%s)", kind, guardKindNames())
	case isGuard:
		return fmt.Errorf(`pipeline: %s is a guard: declare it under guards and refer to it with {"guard": name}`, kind)
	}
	names := []string{"hedge", "retry", "timeout"}
	names = append(names, sortedKeys(s.kinds)...)
	return fmt.Errorf("pipeline: unknown layer kind %q (%s)", kind, strings.Join(names, ", "))
}
