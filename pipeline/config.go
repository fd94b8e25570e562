package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/f0b5b96b/resilience/internal/jsonconf"
)

// decode reads raw (absent or null: nothing) into *c with c's
// UnmarshalJSON, then validates it; errors name the field's path under
// path when the message names a field of C.
func decode[C any](path string, raw json.RawMessage, c *C, validate func(C) error) error {
	if len(raw) > 0 && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		var err error
		if u, ok := any(c).(json.Unmarshaler); ok {
			err = u.UnmarshalJSON(raw)
		} else {
			err = json.Unmarshal(raw, c)
		}
		if err != nil {
			return configErr[C](path, err)
		}
	}
	if err := validate(*c); err != nil {
		return configErr[C](path, err)
	}
	return nil
}

// configErr returns err at path, or at path.Field when err's message
// names a field of C: "pkg: Config.Field: ..." (a field that could not be
// read) or "pkg: Field must ..." (a field that Validate rejected).
func configErr[C any](path string, err error) *Error {
	if f := fieldOf(reflect.TypeFor[C](), err.Error()); f != "" {
		path += "." + f
	}
	if uf := (*jsonconf.UnknownFieldError)(nil); errors.As(err, &uf) {
		// A key the config (or a struct in it) does not have: the path
		// names the key, and the error matches ErrUnknownField.
		return pathErr(path+"."+uf.Key, unknownField{err})
	}
	return pathErr(path, err)
}

func fieldOf(t reflect.Type, msg string) string {
	_, rest, ok := strings.Cut(msg, ": ")
	if !ok {
		return ""
	}
	if strings.HasPrefix(rest, "Config") { // "Config.Field: ..." or "Config[T].Field: ..."
		name, _, _ := strings.Cut(rest, ":")
		if i := strings.LastIndex(name, "."); i >= 0 {
			rest = name[i+1:]
		}
	}
	end := strings.IndexFunc(rest, func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if end >= 0 {
		rest = rest[:end]
	}
	if f, ok := t.FieldByName(rest); ok && f.IsExported() {
		return rest
	}
	return ""
}

// canonical returns c's JSON as its MarshalJSON writes it: the same for
// two configurations that mean the same, whatever the document's spacing,
// key order or case.
func canonical(c any) (string, error) {
	b, err := json.Marshal(c)
	return string(b), err
}

// changedFields returns the names of the fields that differ between two
// canonical configurations, sorted.
func changedFields(a, b string) []string {
	var ma, mb map[string]json.RawMessage
	_ = json.Unmarshal([]byte(a), &ma)
	_ = json.Unmarshal([]byte(b), &mb)
	var out []string
	for k, v := range ma {
		if w, ok := mb[k]; !ok || !bytes.Equal(v, w) {
			out = append(out, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// protect runs f and turns a panic into an error: a constructor's check
// that Validate does not make.
func protect(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			switch r := r.(type) {
			case error:
				err = r
			default:
				err = errors.New(fmt.Sprint(r))
			}
		}
	}()
	return f()
}

// unknownField is a config's error of a key it has no field for, as its
// package words it, matching [ErrUnknownField].
type unknownField struct{ err error }

func (e unknownField) Error() string   { return e.err.Error() }
func (e unknownField) Unwrap() []error { return []error{e.err, ErrUnknownField} }
