package resilienceredis

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
)

// The checks every constructor of the package makes of its required
// arguments, with messages that name the constructor: one rule for all.

// checkClient panics if rdb is nil, or a nil pointer (a nil
// *redis.Client) that would fail at the first round trip.
func checkClient(ctor string, rdb redis.UniversalClient) {
	if rdb == nil {
		panic("resilienceredis: " + ctor + "(rdb, ...): rdb must not be nil")
	}
	if v := reflect.ValueOf(rdb); v.Kind() == reflect.Pointer && v.IsNil() {
		panic(fmt.Sprintf("resilienceredis: %s(rdb, ...): rdb must not be nil, got a nil %T", ctor, rdb))
	}
}

// nameProblem says what is wrong with name as the name of a guard or a
// store, or "" if nothing is: it must not be empty, must be valid UTF-8
// (it names the guard in telemetry), and must hold no '{' or '}' (it is
// the hash tag of the Redis keys).
func nameProblem(name string) string {
	switch {
	case name == "":
		return "name must not be empty"
	case !utf8.ValidString(name):
		return "name must be valid UTF-8"
	case strings.ContainsAny(name, "{}"):
		return "name must hold no '{' or '}'"
	}
	return ""
}

// checkName panics if name is not a valid name (see nameProblem), naming
// the constructor and the value.
func checkName(ctor, name string) {
	if p := nameProblem(name); p != "" {
		panic(fmt.Sprintf("resilienceredis: %s(rdb, %q, ...): %s", ctor, name, p))
	}
}

// checkPositional panics if the config option opt set field to got,
// which differs from the value want given to ctor as an argument: a
// required argument is not overridden by a config struct.
func checkPositional(ctor, args, opt, field string, got, want any) {
	if got == want {
		return
	}
	if g, ok := got.(float64); ok && g != g {
		if w, ok := want.(float64); ok && w != w {
			return // NaN given, NaN kept: Validate says why it is invalid
		}
	}
	panic(fmt.Sprintf("resilienceredis: %s(%s): %s's %s %#v differs from the %s given", ctor, args, opt, field, got, strings.ToLower(field)))
}

// zeroValue panics for a method called on the zero value of a guard:
// typ's constructor ctor makes the only usable ones.
//
//go:noinline
func zeroValue(typ, method, ctor string) {
	panic(fmt.Sprintf("resilienceredis: %s.%s on a zero %s: create one with %s", typ, method, typ, ctor))
}

// zeroArg panics for a guard's zero value given to fn (a policy
// constructor): typ's constructor ctor makes the only usable ones.
func zeroArg(fn, typ, ctor string) {
	panic(fmt.Sprintf("resilienceredis: %s of a zero %s: create one with %s", fn, typ, ctor))
}

// checkOption panics if the option opt, the i-th of ctor's, is nil.
func checkOption(ctor string, i int, isNil bool) {
	if isNil {
		panic(fmt.Sprintf("resilienceredis: %s: option %d must not be nil", ctor, i))
	}
}
