package resiliencehttp

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/f0b5b96b/resilience"
)

// StatusError is how a response the [Transport] classifies as a failure
// reaches the policies: retry, breaker, a Fallback and the rest see it as
// the attempt's error. Its RetryAfter method carries the response's
// Retry-After header, so a retry waits at least that long.
//
// When the policies give up after such a response, the caller of RoundTrip
// gets the response itself, with err == nil, not a StatusError. The
// caller's error wraps a StatusError (find it with errors.As) only when
// RoundTrip returns no response although an attempt got a failure:
//
//   - the request's own context ended while the policies were still at
//     work, e.g. cancelled during a retry's wait:
//     "retry: gave up after 1 attempt (context canceled): resiliencehttp:
//     503 Service Unavailable";
//   - the policies gave up with the error of an attempt whose failure's
//     body could not be read (the connection broke), and no other failure
//     response could be read to return instead:
//     "resiliencehttp: 503 Service Unavailable: reading its body:
//     unexpected EOF".
type StatusError struct {
	// StatusCode and Status are the response's, e.g. 503 and
	// "503 Service Unavailable".
	StatusCode int
	Status     string

	// After is the wait the response's Retry-After header asks for; 0 when
	// it has none (or one that cannot be parsed), which is no hint.
	After time.Duration
}

// Error returns e.g. "resiliencehttp: 503 Service Unavailable (retry after 2s)".
func (e *StatusError) Error() string {
	status := e.Status
	if status == "" {
		status = strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode)
	}
	if e.After > 0 {
		return fmt.Sprintf("resiliencehttp: %s (retry after %v)", status, e.After)
	}
	return "resiliencehttp: " + status
}

// HTTPStatusCode returns e.StatusCode. Code that reads the status of a
// failure without importing this package finds it through this method:
// the exporters resilienceotel and resilienceprom report it as the
// failure's error.type ("503").
func (e *StatusError) HTTPStatusCode() int { return e.StatusCode }

// RetryAfter returns the wait that the response's Retry-After header asked
// for, or -1 (no hint) when After is 0: a response without the header (or
// with "Retry-After: 0") gives no hint, so it never shadows a guard's hint
// beside it in an error tree, and a retry waits its own backoff. Retry and
// other layers find it with resilience.RetryAfter.
func (e *StatusError) RetryAfter() time.Duration {
	if e.After <= 0 {
		return -1
	}
	return e.After
}

// IsFailure is the default classification of responses: 429 Too Many
// Requests and every 5xx except 501 Not Implemented (which no retry can
// fix) are failures; every other status is a success.
func IsFailure(resp *http.Response) bool {
	code := resp.StatusCode
	return code == http.StatusTooManyRequests || (code >= 500 && code <= 599 && code != http.StatusNotImplemented)
}

// ParseRetryAfter reads a Retry-After header value (RFC 9110, section
// 10.2.3): either a number of seconds, or an HTTP date, which is taken
// relative to now. It returns the wait (0 for a date in the past) and
// whether the value could be parsed. Negative or fractional seconds do not
// parse; a number of seconds too large for a time.Duration saturates at
// [resilience.Never].
func ParseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if value[0] >= '0' && value[0] <= '9' {
		secs, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return resilience.Never, true
			}
			return 0, false
		}
		if secs > uint64(resilience.Never/time.Second) {
			return resilience.Never, true
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// retryAfterOf returns the Retry-After of resp. An HTTP date is taken
// relative to the response's own Date header when it has one, so that the
// client's and the server's clocks need not agree, else relative to now.
func retryAfterOf(resp *http.Response, now func() time.Time) time.Duration {
	value := resp.Header.Get("Retry-After")
	if value == "" {
		return 0
	}
	ref := time.Time{}
	if date, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		ref = date
	} else {
		ref = now()
	}
	d, _ := ParseRetryAfter(value, ref)
	return d
}
