// Package jsonconf writes and reads the policies' Config structs as JSON,
// one way for every package: exported fields by their Go names, zero fields
// left out (a zero field means the default), durations as Go duration
// strings ("250ms", "30s"; -1ns, the Off value, as "off"), infinite floats
// as "+Inf" (read back from "+Inf", "Inf" or "-Inf"), and fields that cannot be serialised (functions, interfaces
// such as a clock, pointers to shared objects, channels) left out. Reading
// matches field names as encoding/json does (case-insensitively), rejects
// unknown fields, and leaves fields that are absent or null unchanged.
package jsonconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"
)

var durationType = reflect.TypeFor[time.Duration]()

// serialisable reports whether a field of type t is written and read.
func serialisable(f reflect.StructField) bool {
	if !f.IsExported() {
		return false
	}
	switch f.Type.Kind() {
	case reflect.Func, reflect.Interface, reflect.Chan, reflect.Pointer, reflect.UnsafePointer:
		return false
	}
	return true
}

// Marshal returns the JSON object of the struct v.
func Marshal(v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	rt := rv.Type()
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	for i := range rt.NumField() {
		f := rt.Field(i)
		fv := rv.Field(i)
		if !serialisable(f) || fv.IsZero() {
			continue
		}
		val, err := marshalValue(fv)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", rt.Name(), f.Name, err)
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		name, _ := json.Marshal(f.Name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Duration returns d as a Config's JSON spells it: "off" for the Off
// value (-1ns), else d.String() ("250ms"). Validate messages print
// durations with it, so that a field read as "off" is reported as "off".
func Duration(d time.Duration) string {
	if d == -1 {
		return "off"
	}
	return d.String()
}

func marshalValue(fv reflect.Value) ([]byte, error) {
	switch {
	case fv.Type() == durationType:
		return json.Marshal(Duration(time.Duration(fv.Int())))
	case fv.Kind() == reflect.Float64 || fv.Kind() == reflect.Float32:
		x := fv.Float()
		switch {
		case math.IsInf(x, 1):
			return []byte(`"+Inf"`), nil
		case math.IsInf(x, -1):
			return []byte(`"-Inf"`), nil
		case math.IsNaN(x):
			return nil, fmt.Errorf("NaN has no JSON form")
		}
	}
	return json.Marshal(fv.Interface())
}

// Unmarshal reads the JSON object data into the struct *v. Errors start
// with pkg (the package name) and name the field.
func Unmarshal(pkg string, data []byte, v any) error {
	rv := reflect.ValueOf(v).Elem()
	rt := rv.Type()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return fmt.Errorf("%s: %s: a JSON object is expected, got %s", pkg, rt.Name(), typeErr.Value)
		}
		return fmt.Errorf("%s: %s: %w", pkg, rt.Name(), err)
	}
	if key, dup := DuplicateKey(data); dup {
		return fmt.Errorf("%s: %s: the key %q appears twice", pkg, rt.Name(), key)
	}
	for key, raw := range fields {
		i := fieldIndex(rt, key)
		if i < 0 {
			return &UnknownFieldError{Pkg: pkg, Type: rt.Name(), Key: key}
		}
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			continue
		}
		f := rt.Field(i)
		if err := unmarshalValue(raw, rv.Field(i)); err != nil {
			return fmt.Errorf("%s: %s.%s: %w", pkg, rt.Name(), f.Name, err)
		}
	}
	return nil
}

// fieldIndex returns the index of the serialisable field named key: the
// exact name first, else the first that matches it case-insensitively, as
// encoding/json matches; -1 if none.
func fieldIndex(rt reflect.Type, key string) int {
	fold := -1
	for i := range rt.NumField() {
		f := rt.Field(i)
		if !serialisable(f) {
			continue
		}
		if f.Name == key {
			return i
		}
		if fold < 0 && strings.EqualFold(f.Name, key) {
			fold = i
		}
	}
	return fold
}

func unmarshalValue(raw json.RawMessage, fv reflect.Value) error {
	switch {
	case fv.Type() == durationType:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("a duration must be a string such as \"250ms\" or \"off\", got %s", raw)
		}
		if s == "off" {
			fv.SetInt(-1)
			return nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		fv.SetInt(int64(d))
		return nil
	case fv.Kind() == reflect.Float64 || fv.Kind() == reflect.Float32:
		var s string
		if json.Unmarshal(raw, &s) == nil {
			switch s {
			case "+Inf", "Inf":
				fv.SetFloat(math.Inf(1))
				return nil
			case "-Inf":
				fv.SetFloat(math.Inf(-1))
				return nil
			}
			return fmt.Errorf("a number, \"+Inf\" or \"-Inf\", got %s", raw)
		}
	}
	return json.Unmarshal(raw, fv.Addr().Interface())
}

// UnknownFieldError is the error of a key that the struct being read has no
// field for; errors.As finds it through the errors of nested fields.
type UnknownFieldError struct {
	Pkg, Type, Key string
}

func (e *UnknownFieldError) Error() string {
	return fmt.Sprintf("%s: %s: unknown field %q", e.Pkg, e.Type, e.Key)
}

// DuplicateKey reports the first key that appears twice in the JSON object
// data (at its top level), which encoding/json would read as the last one
// silently. data must be a valid JSON object.
func DuplicateKey(data []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		key, _ := t.(string)
		if seen[key] {
			return key, true
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}
