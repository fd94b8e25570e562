package telemetry

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// CheckName panics unless name, the name given to the option or function
// called option (such as "breaker: WithName"), is valid UTF-8. A policy's
// name is a label of every metric and event it reports: exporters must
// send it as text (Prometheus label values and OpenTelemetry attribute
// values must be valid UTF-8), so the policies' WithName options reject a
// name that is not, at construction, where the mistake is made. The panic
// reads, for example, `breaker: WithName("db\xff"): name must be valid
// UTF-8`. "" is valid. CheckName does not allocate unless it panics.
func CheckName(option, name string) {
	if !utf8.ValidString(name) {
		panic(option + "(" + strconv.Quote(name) + "): name must be valid UTF-8")
	}
}

// ErrInvalidName is matched by the error of a registration under a name
// that is not valid UTF-8 (see [CheckName]).
var ErrInvalidName = errors.New("telemetry: name must be valid UTF-8")
