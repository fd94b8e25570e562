package breaker

import "github.com/f0b5b96b/resilience/internal/jsonconf"

// MarshalJSON writes c as a JSON object: each field by its Go name, zero
// fields (defaults) left out, durations as Go duration strings ("250ms",
// "30s"), CooldownBackoff as [backoff.Schedule.MarshalJSON] writes it.
// TripIf, Classify, OnStateChange, Observer and Clock cannot be
// serialised and are skipped. For example
//
//	{"Name":"payments","Threshold":-1,"FailureRatio":0.5,"WindowDuration":"1m0s","Cooldown":"10s"}
func (c Config) MarshalJSON() ([]byte, error) { return jsonconf.Marshal(c) }

// UnmarshalJSON reads what [Config.MarshalJSON] writes into c. Field
// names match case-insensitively; fields that are absent or null keep c's
// values, so decoding into the zero Config leaves them at their defaults.
// An unknown field (TripIf, Classify, OnStateChange, Observer and Clock
// included),
// a duration that is not a duration string, or an invalid CooldownBackoff
// is an error naming the field, for example
// `breaker: Config.Cooldown: time: invalid duration "soon"`. What decodes
// is not checked: call [Config.Validate].
func (c *Config) UnmarshalJSON(data []byte) error {
	// jsonconf reads field by field, never c as a whole, so passing c
	// itself does not recurse, and errors name the type Config.
	return jsonconf.Unmarshal("breaker", data, c)
}
