package pipeline

import (
	"reflect"
	"testing"
)

// fieldOf reads the field a config's message names, an identifier of
// letters, digits and underscores (first word after the package, or the
// last part of "Config.Field:"), and only an exported field of the config.
func TestFieldOfReadsTheWholeIdentifier(t *testing.T) {
	type config struct {
		Az09_Zz int
		Aa      int
		hidden  int // unexported: fieldOf must not name it
	}
	_ = config{}.hidden
	for msg, want := range map[string]string{
		"pkg: Az09_Zz must be >= 0":          "Az09_Zz",
		"pkg: Aa must be set":                "Aa",
		"pkg: Config.Az09_Zz: a number, got": "Az09_Zz",
		"pkg: Config[T].Aa: a number":        "Aa",
		"pkg: hidden must be set":            "",
		"pkg: Nope must be set":              "",
		"no package prefix":                  "",
	} {
		if got := fieldOf(reflect.TypeFor[config](), msg); got != want {
			t.Errorf("fieldOf(%q) = %q, want %q", msg, got, want)
		}
	}
}
