// Package opt has options at the edges of rules 4 and 5.
package opt

type limits struct{ min, max int }

type config struct {
	min, max int
	limits   limits
	init     []func(*config)
}

var defaults config

// Option is sealed.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithConfig merges a whole config: exempt from rule 4 by rule.
func WithConfig(v config) Option {
	return optionFunc(func(c *config) { c.min, c.max = v.min, v.max })
}

// Defaults is not an option: rule 4 does not read it.
func Defaults() func(*config) { return func(c *config) { c.min, c.max = 1, 2 } }

// WithLazy sets one field, init; the func it appends sets two when run,
// and is read as an option of its own.
func WithLazy(n int) Option {
	return optionFunc(func(c *config) {
		c.init = append(c.init, func(c *config) { c.min, c.max = n, n })
	})
}

// WithBump increments two fields.
func WithBump() Option { return optionFunc(func(c *config) { c.min++; c.max-- }) }

// WithShared sets one field of the config, and one of a variable.
func WithShared(n int) Option {
	return optionFunc(func(c *config) { c.min = n; defaults.max = n })
}

// WithLimits sets one field, limits, through its fields.
func WithLimits(min, max int) Option {
	return optionFunc(func(c *config) { c.limits.min, c.limits.max = min, max })
}

// WithMixed sets min and, through its field, limits.
func WithMixed(n int) Option {
	return optionFunc(func(c *config) { c.min = n; c.limits.max = n })
}

// EmptyOption has no method: anything is one.
type EmptyOption interface{}

// LoopOption embeds itself (it does not compile; the checker must not
// loop on it).
type LoopOption interface {
	LoopOption
	apply(*config)
}

// OpenOption has an exported method.
type OpenOption interface{ Apply(*config) }

// WrapOption embeds OpenOption, which is not sealed.
type WrapOption interface {
	OpenOption
	apply(*config)
}

// Limits is a struct.
type Limits struct{}

// TermOption embeds a type that is not an interface.
type TermOption interface {
	Limits
	apply(*config)
}
