package dashboard

import (
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/f0b5b96b/resilience/telemetry"
)

// FormatVersion is the version of the JSON snapshot format, its "version"
// field. It changes only when a field changes meaning or goes away; new
// fields may be added within a version.
const FormatVersion = 2

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
	b = d.appendKinds(b)
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
	if t.state != "" {
		b = append(b, `,"state":`...)
		b = appendString(b, t.state)
		b = append(b, `,"forced":`...)
		b = strconv.AppendBool(b, t.forced)
	}
	b = append(b, `,"guards":[`...)
	for i := range t.gs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendGuard(b, &t.gs[i])
	}
	b = append(b, ']')
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

// appendGuard appends one guard of a tile: its kind, state, refusals,
// values (name to number, in the guard's order) and keys.
func appendGuard(b []byte, s *telemetry.Snapshot) []byte {
	b = append(b, `{"kind":`...)
	b = appendString(b, string(s.Kind))
	if s.State != "" {
		b = append(b, `,"state":`...)
		b = appendString(b, s.State)
	}
	b = append(b, `,"refused":`...)
	b = strconv.AppendUint(b, s.Refused, 10)
	b = append(b, `,"values":{`...)
	for i, v := range s.Values {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, v.Name)
		b = append(b, ':')
		b = appendNumber(b, v.Value)
	}
	b = append(b, '}')
	if k := s.Keys; k != nil {
		b = append(b, `,"keys":{"keys":`...)
		b = strconv.AppendInt(b, int64(k.Keys), 10)
		b = append(b, `,"maxKeys":`...)
		b = strconv.AppendInt(b, int64(k.MaxKeys), 10)
		b = append(b, `,"open":`...)
		b = strconv.AppendInt(b, int64(k.Open), 10)
		b = append(b, `,"top":[`...)
		for i, ks := range k.Top {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = appendString(b, ks.Key)
			if ks.State != "" {
				b = append(b, `,"state":`...)
				b = appendString(b, ks.State)
			}
			b = append(b, `,"refused":`...)
			b = strconv.AppendUint(b, ks.Refused, 10)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	return append(b, '}')
}

// appendKinds appends "values": what each value of this snapshot's
// guards is, by kind and value name: its unit, type and help, as the
// first guard of its kind that has it describes it.
func (d *Dashboard) appendKinds(b []byte) []byte {
	b = append(b, `,"values":{`...)
	first := true
	for _, k := range d.klist {
		sigs := d.kinds[k]
		if len(sigs) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, string(k))
		b = append(b, ":{"...)
		n := 0
		for i, sig := range sigs {
			for _, v := range sig {
				if i > 0 && described(sigs[:i], v.Name) {
					continue
				}
				if n > 0 {
					b = append(b, ',')
				}
				n++
				b = appendString(b, v.Name)
				b = append(b, `:{"unit":`...)
				b = appendString(b, v.Unit)
				b = append(b, `,"type":`...)
				b = appendString(b, v.Type.String())
				b = append(b, `,"help":`...)
				b = appendString(b, v.Help)
				b = append(b, '}')
			}
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

// described reports whether a value of that name is in one of sigs.
func described(sigs [][]telemetry.Value, name string) bool {
	for _, sig := range sigs {
		for _, v := range sig {
			if v.Name == name {
				return true
			}
		}
	}
	return false
}

// appendNumber appends v as a JSON number: an integer as one, another
// number with 6 significant digits; null if v is NaN or infinite.
func appendNumber(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', 6, 64)
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
