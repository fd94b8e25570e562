package hedge

import (
	"errors"
	"strconv"
	"strings"
)

// keep is how many attempt errors a failed call keeps at each end: those of
// the first keep attempts and of the last keep to start.
const keep = 3

// failures holds the errors of a call's failed attempts, a bounded number of
// them however many attempts fail: the first keep attempts' and, of the
// attempts after those, the keep last to start.
type failures struct {
	head [keep]error   // head[i]: attempt i's error, i < keep
	tail [keep]indexed // tail[i%keep]: the error of the attempt i >= keep with the highest i
}

// indexed is the error of attempt i.
type indexed struct {
	i   int
	err error
}

// add records that attempt i failed with err (not nil).
func (f *failures) add(i int, err error) {
	if i < keep {
		f.head[i] = err
		return
	}
	if t := &f.tail[i%keep]; t.err == nil || i > t.i {
		*t = indexed{i, err}
	}
}

// kept returns the errors kept of a call whose n attempts all failed, in
// start order: those of attempts 0 to keep-1, then n-keep to n-1.
func (f *failures) kept(n int) []error {
	errs := make([]error, 0, min(n, 2*keep))
	for i := range min(n, keep) {
		errs = append(errs, f.head[i])
	}
	for i := max(keep, n-keep); i < n; i++ {
		errs = append(errs, f.tail[i%keep].err)
	}
	return errs
}

// failedError is returned when every attempt of a call failed (none was
// accepted). It wraps the caller's context error, if the context ended,
// and the errors of the first and the last attempts to start (up to three
// of each, in start order), the way errors.Join does; its message says how
// many attempts it left out.
type failedError struct {
	ctxErr   error
	errs     []error // the kept attempts' errors, in start order
	attempts int     // attempts started
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
	b.WriteString(strconv.Itoa(e.attempts))
	if e.attempts == 1 {
		b.WriteString(" attempt")
	} else {
		b.WriteString(" attempts")
	}
	if e.ctxErr == nil {
		b.WriteString(" failed")
	}
	head := min(len(e.errs), keep)
	for i, err := range e.errs {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		if omitted := e.attempts - len(e.errs); i == head && omitted > 0 {
			b.WriteString("(")
			b.WriteString(strconv.Itoa(omitted))
			b.WriteString(" more); ")
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
