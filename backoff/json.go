package backoff

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/f0b5b96b/resilience/internal/jsonconf"
)

// scheduleJSON is the JSON form of a Schedule.
type scheduleJSON struct {
	Kind       string // "constant", "linear" or "exponential"
	Base       time.Duration
	Step       time.Duration // linear only
	Multiplier float64       // exponential only
	Max        time.Duration // linear and exponential
	Jitter     string        // "none" (or absent), "full", "equal", "decorrelated"
}

// MarshalJSON writes s as a JSON object with durations as Go duration
// strings, for example
//
//	{"Kind":"exponential","Base":"100ms","Multiplier":2,"Max":"10s","Jitter":"full"}
//	{"Kind":"constant","Base":"1s"}
//	{"Kind":"constant"}                        (Constant(0): no wait)
//
// The zero Schedule (not set) is null. The random source is not written.
func (s Schedule) MarshalJSON() ([]byte, error) {
	j := scheduleJSON{Base: s.base}
	switch s.kind {
	case kindUnset:
		return []byte("null"), nil
	case kindConstant:
		j.Kind = "constant"
	case kindLinear:
		j.Kind, j.Step, j.Max = "linear", s.step, s.max
	case kindExponential:
		j.Kind, j.Multiplier, j.Max = "exponential", s.mult, s.max
	}
	if s.jitter != None {
		j.Jitter = s.jitter.String()
	}
	return jsonconf.Marshal(j)
}

// UnmarshalJSON reads what [Schedule.MarshalJSON] writes, building the
// schedule with the same constructor and so the same checks: an invalid
// schedule is an error with the constructor's message. null leaves s as it
// is. The random source is the default one.
//
// Kind is required. A field that is absent (or zero) means its default,
// as in every Config of this module:
//
//	field       default (absent or 0)
//	Base        0: the first delay is 0
//	Step        0: no growth (linear)
//	Multiplier  2 (exponential)
//	Max         linear and exponential: the larger of Base and 10s, or 0
//	            for a schedule that can only give 0 (Base 0 exponential,
//	            Base and Step 0 linear); constant: Base
//	Jitter      "none"
//
// So {"Kind":"exponential","Base":"100ms"} is Exponential(100ms, 2, 10s).
func (s *Schedule) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		return nil
	}
	// The local type's name is the one errors give: "backoff:
	// Schedule.Base: ...".
	type Schedule scheduleJSON
	var read Schedule
	if err := jsonconf.Unmarshal("backoff", data, &read); err != nil {
		return err
	}
	j := scheduleJSON(read)
	jitter, err := parseJitter(j.Jitter)
	if err != nil {
		return err
	}
	built, err := fromJSON(j, jitter)
	if err != nil {
		return err
	}
	*s = built
	return nil
}

func parseJitter(name string) (Jitter, error) {
	for j := None; j <= Decorrelated; j++ {
		if name == j.String() {
			return j, nil
		}
	}
	if name == "" {
		return None, nil
	}
	return None, fmt.Errorf("backoff: Schedule Jitter must be \"none\", \"full\", \"equal\" or \"decorrelated\", got %q", name)
}

// The defaults of a schedule's JSON fields that are absent (or zero).
const (
	defaultJSONMultiplier = 2
	defaultJSONMax        = 10 * time.Second
)

// fromJSON calls the constructor j names, turning its panic into an error.
func fromJSON(j scheduleJSON, jitter Jitter) (s Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			msg, ok := r.(string)
			if !ok {
				panic(r)
			}
			err = errors.New(msg)
		}
	}()
	extra := func(name string, set bool) {
		if set {
			panic(fmt.Sprintf("backoff: Schedule %s does not apply to kind %q", name, j.Kind))
		}
	}
	switch j.Kind {
	case "constant":
		extra("Step", j.Step != 0)
		extra("Multiplier", j.Multiplier != 0)
		extra("Max", j.Max != 0 && j.Max != j.Base)
		s = Constant(j.Base)
	case "linear":
		extra("Multiplier", j.Multiplier != 0)
		if j.Max == 0 && (j.Base > 0 || j.Step > 0) {
			j.Max = max(j.Base, defaultJSONMax)
		}
		s = Linear(j.Base, j.Step, j.Max)
	case "exponential":
		extra("Step", j.Step != 0)
		if j.Multiplier == 0 {
			j.Multiplier = defaultJSONMultiplier
		}
		if j.Max == 0 && j.Base > 0 {
			j.Max = max(j.Base, defaultJSONMax)
		}
		s = Exponential(j.Base, j.Multiplier, j.Max)
	default:
		return Schedule{}, fmt.Errorf("backoff: Schedule Kind must be \"constant\", \"linear\" or \"exponential\", got %q", j.Kind)
	}
	return s.WithJitter(jitter), nil
}

var _ json.Marshaler = Schedule{}
