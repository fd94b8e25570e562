// Package merge implements the WithConfig rule of every policy package: a
// Config's zero fields mean "the default", so applying a Config sets only
// its non-zero fields.
package merge

import "reflect"

// NonZero sets each field of *dst to src's, for the fields of src that are
// not the zero value of their type (funcs and pointers count as set when
// not nil). Fields of src that are zero leave *dst's as they are. T must be
// a struct type.
func NonZero[T any](dst *T, src T) {
	d := reflect.ValueOf(dst).Elem()
	s := reflect.ValueOf(src)
	for i := range s.NumField() {
		if f := s.Field(i); !f.IsZero() && d.Field(i).CanSet() {
			d.Field(i).Set(f)
		}
	}
}
