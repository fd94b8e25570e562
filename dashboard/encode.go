package dashboard

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// FormatVersion is the version of the JSON snapshot format, its "version"
// field. It changes only when a field changes meaning or goes away; new
// fields may be added within a version.
const FormatVersion = 1

// appendSnapshot appends the snapshot in the package's JSON format: with
// each tile's history if full.
func (d *Dashboard) appendSnapshot(b []byte, full bool) []byte {
	b = append(b, `{"version":`...)
	b = strconv.AppendInt(b, FormatVersion, 10)
	b = append(b, `,"time":"`...)
	b = d.last.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, `","seq":`...)
	b = strconv.AppendUint(b, d.seq, 10)
	b = append(b, `,"intervalSeconds":`...)
	b = appendFixed(b, Interval.Seconds(), 3)
	b = append(b, `,"guards":[`...)
	for i, t := range d.order {
		if i > 0 {
			b = append(b, ',')
		}
		b = t.appendJSON(b, full)
	}
	b = append(b, `],"pipelines":[`...)
	for i, p := range d.plist {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, p.name)
		b = append(b, `,"chain":`...)
		b = appendString(b, p.chain)
		b = append(b, `,"retriesPerSec":`...)
		b = appendFixed(b, p.retryRate, 1)
		b = append(b, `,"fallbacksPerSec":`...)
		b = appendFixed(b, p.fbRate, 1)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

func (t *tile) appendJSON(b []byte, full bool) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, t.name)
	if s := t.breaker; s != nil {
		b = append(b, `,"breaker":{"state":`...)
		b = appendString(b, s.State)
		b = append(b, `,"forced":`...)
		b = strconv.AppendBool(b, s.Forced)
		b = append(b, `,"generation":`...)
		b = strconv.AppendUint(b, s.Generation, 10)
		b = append(b, `,"calls":`...)
		b = strconv.AppendUint(b, s.Calls, 10)
		b = append(b, `,"failures":`...)
		b = strconv.AppendUint(b, s.Failures, 10)
		b = append(b, `,"slow":`...)
		b = strconv.AppendUint(b, s.Slow, 10)
		b = append(b, `,"failureRatio":`...)
		b = appendFixed(b, s.FailureRatio, 4)
		b = append(b, `,"refused":`...)
		b = strconv.AppendUint(b, t.refused[0], 10)
		b = append(b, '}')
	}
	if s := t.bulkhead; s != nil {
		b = append(b, `,"bulkhead":{"limit":`...)
		b = strconv.AppendInt(b, int64(s.Limit), 10)
		b = append(b, `,"inFlight":`...)
		b = strconv.AppendInt(b, int64(s.InFlight), 10)
		b = append(b, `,"queued":`...)
		b = strconv.AppendInt(b, int64(s.Queued), 10)
		b = append(b, `,"refused":`...)
		b = strconv.AppendUint(b, t.refused[1], 10)
		b = append(b, '}')
	}
	if s := t.limiter; s != nil {
		b = append(b, `,"limiter":{"rate":`...)
		b = appendFixed(b, s.Rate, 3)
		b = append(b, `,"burst":`...)
		b = strconv.AppendInt(b, int64(s.Burst), 10)
		b = append(b, `,"tokens":`...)
		b = appendFixed(b, s.Tokens, 2)
		b = append(b, `,"refused":`...)
		b = strconv.AppendUint(b, t.refused[2], 10)
		b = append(b, '}')
	}
	b = append(b, `,"callsPerSec":`...)
	b = appendFixed(b, t.calls, 1)
	b = append(b, `,"errorsPerSec":`...)
	b = appendFixed(b, t.errors, 1)
	b = append(b, `,"refusalsPerSec":`...)
	b = appendFixed(b, t.refusals, 1)
	b = append(b, `,"errorPct":`...)
	b = appendFixed(b, t.errPct, 1)
	b = append(b, `,"latencyMs":`...)
	if math.IsNaN(t.latency[0]) {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"p50":`...)
		b = appendSig3(b, t.latency[0])
		b = append(b, `,"p90":`...)
		b = appendSig3(b, t.latency[1])
		b = append(b, `,"p99":`...)
		b = appendSig3(b, t.latency[2])
		b = append(b, '}')
	}
	if full {
		b = append(b, `,"history":{"calls":`...)
		b = t.appendHistory(b, &t.hCalls, t.hasCalls)
		b = append(b, `,"errors":`...)
		b = t.appendHistory(b, &t.hErrors, t.hasErrors)
		b = append(b, '}')
	}
	return append(b, '}')
}

// appendHistory appends the points of h, oldest first, or null if the
// tile has no source for them.
func (t *tile) appendHistory(b []byte, h *[HistoryLen]uint32, has bool) []byte {
	if !has {
		return append(b, "null"...)
	}
	b = append(b, '[')
	start := (t.hNext - t.hLen + HistoryLen) % HistoryLen
	for i := range t.hLen {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTenths(b, uint64(h[(start+i)%HistoryLen]))
	}
	return append(b, ']')
}

// appendTenths appends v tenths as a decimal number: 253 as 25.3, 250 as 25.
func appendTenths(b []byte, v uint64) []byte {
	b = strconv.AppendUint(b, v/10, 10)
	if f := v % 10; f != 0 {
		b = append(b, '.', byte('0'+f))
	}
	return b
}

var pow10 = [...]float64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// appendFixed appends v rounded to dec decimals (dec <= 9), without
// trailing zeros; null if v is NaN or infinite (JSON has no such number).
func appendFixed(b []byte, v float64, dec int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	if v < 0 {
		if r := math.Round(-v * pow10[dec]); r != 0 {
			b = append(b, '-')
		}
		v = -v
	}
	r := math.Round(v * pow10[dec])
	if r >= 1<<53 { // too large for the integer path: exact enough as is
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	n := uint64(r)
	p := uint64(pow10[dec])
	b = strconv.AppendUint(b, n/p, 10)
	f := n % p
	if f == 0 {
		return b
	}
	for f%10 == 0 { // trailing zeros
		f /= 10
		dec--
	}
	b = append(b, '.')
	var digits [9]byte
	for i := dec - 1; i >= 0; i-- {
		digits[i] = byte('0' + f%10)
		f /= 10
	}
	return append(b, digits[:dec]...)
}

// appendSig3 appends v (>= 0) with three significant digits, at most 6
// decimals.
func appendSig3(b []byte, v float64) []byte {
	dec := 0
	switch {
	case v >= 100:
	case v >= 10:
		dec = 1
	case v >= 1:
		dec = 2
	case v > 0:
		dec = min(2-int(math.Floor(math.Log10(v))), 6)
	}
	return appendFixed(b, v, dec)
}

// appendString appends s as a JSON string, escaped as encoding/json does
// (<, > and & too, so that the JSON is safe in HTML), with invalid UTF-8
// replaced by U+FFFD.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
