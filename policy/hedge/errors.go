package hedge

import (
	"errors"
	"strconv"
	"strings"
)

// failedError is returned when every attempt of a call failed (none was
// accepted). It wraps the caller's context error, if the context ended,
// and each attempt's error, in the order the attempts started, the way
// errors.Join does.
type failedError struct {
	ctxErr error
	errs   []error
}

func (e *failedError) Error() string {
	var b strings.Builder
	b.WriteString("hedge: ")
	if e.ctxErr != nil {
		b.WriteString(e.ctxErr.Error())
		b.WriteString(" after ")
	} else {
		b.WriteString("all ")
	}
	b.WriteString(strconv.Itoa(len(e.errs)))
	if len(e.errs) == 1 {
		b.WriteString(" attempt")
	} else {
		b.WriteString(" attempts")
	}
	if e.ctxErr == nil {
		b.WriteString(" failed")
	}
	for i, err := range e.errs {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e *failedError) Unwrap() []error {
	if e.ctxErr == nil {
		return e.errs
	}
	return append([]error{e.ctxErr}, e.errs...)
}

// errRejected stands for the nil error of a result that Accept rejected.
var errRejected = errors.New("hedge: result not accepted")
