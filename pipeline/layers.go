package pipeline

import (
	"encoding/json"
	"errors"

	"github.com/f0b5b96b/resilience"
	"github.com/f0b5b96b/resilience/policy/hedge"
	"github.com/f0b5b96b/resilience/policy/retry"
	"github.com/f0b5b96b/resilience/policy/timeout"
)

// isLayerKind reports whether kind is a built-in layer kind.
func isLayerKind(kind string) bool {
	switch kind {
	case "retry", "timeout", "hedge":
		return true
	}
	return false
}

// buildLayer returns the layer of a built-in kind from its configuration
// at path, and the configuration's canonical JSON.
func buildLayer[T any](s *settings, kind, path string, raw json.RawMessage) (p resilience.Policy[T], canon string, err error) {
	var cfg any
	err = protect(func() error {
		switch kind {
		case "retry":
			var c retry.Config
			if err := decode(path, raw, &c, retry.Config.Validate); err != nil {
				return err
			}
			c.Clock, c.Observer = cmpOr(c.Clock, s.clock), cmpOr(c.Observer, s.observer)
			cfg, p = c, retry.New[T](retry.WithConfig(c))
		case "timeout":
			var c timeout.Config
			if err := decode(path, raw, &c, timeout.Config.Validate); err != nil {
				return err
			}
			if c.Duration == 0 {
				return pathErr(path+".Duration", errors.New("timeout: Duration must be set (> 0, as \"250ms\")"))
			}
			c.Clock, c.Observer = cmpOr(c.Clock, s.clock), cmpOr(c.Observer, s.observer)
			cfg, p = c, timeout.New[T](c.Duration, timeout.WithConfig(c))
		case "hedge":
			var c hedge.Config[T]
			if err := decode(path, raw, &c, hedge.Config[T].Validate); err != nil {
				return err
			}
			if c.Delay == 0 {
				return pathErr(path+".Delay", errors.New("hedge: Delay must be set (> 0, as \"50ms\")"))
			}
			c.Clock, c.Observer = cmpOr(c.Clock, s.clock), cmpOr(c.Observer, s.observer)
			cfg, p = c, hedge.New[T](c.Delay, hedge.WithConfig(c))
		}
		return nil
	})
	if err != nil {
		var pe *Error
		if !errors.As(err, &pe) {
			err = pathErr(path, err)
		}
		return p, "", err
	}
	canon, err = canonical(cfg)
	if err != nil {
		return p, "", pathErr(path, err)
	}
	return p, canon, nil
}
