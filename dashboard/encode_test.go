package dashboard

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// appendString writes what encoding/json writes, for any string (names
// are the user's: quotes, control characters, HTML, invalid UTF-8).
func TestAppendStringIsEncodingJSON(t *testing.T) {
	check := func(t interface{ Fatalf(string, ...any) }, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("json.Marshal(%q): %v", s, err)
		}
		if got := within(t, fmt.Sprintf("appendString(%q)", s), func() []byte { return appendString(nil, s) }); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
	for _, s := range []string{"", "prices", `a"b\c`, "<script>&", "tab\tnl\ncr\r\x00\x1f\x7f", "\u2028\u2029", "line\u2028sep\u2029end", "héllo 世界", "bad \xff\xfe utf8", "\xed\xa0\x80"} {
		check(t, s)
	}
	rapid.Check(t, func(t *rapid.T) {
		check(t, rapid.String().Draw(t, "text"))
		check(t, string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes")))
	})
}

func TestAppendFixed(t *testing.T) {
	for _, c := range []struct {
		v    float64
		dec  int
		want string
	}{
		{0, 1, "0"}, {25, 1, "25"}, {24.96, 1, "25"}, {24.94, 1, "24.9"}, {0.05, 1, "0.1"},
		{-0.04, 1, "0"}, {-3.25, 2, "-3.25"}, {3.456, 2, "3.46"}, {0.5, 4, "0.5"}, {0.12345, 4, "0.1235"},
		{1e20, 1, "100000000000000000000"},
		// Past 2^53 units of the last decimal the number is written as it is:
		// the digits it has, its fraction too, are those of v rounded.
		{1e15 + 0.5, 1, "1000000000000000.5"}, {9.007199254740993e10, 5, "90071992547.40993"}, {math.NaN(), 1, "null"}, {math.Inf(1), 3, "null"}, {math.Inf(-1), 0, "null"},
	} {
		if got := within(t, fmt.Sprintf("appendFixed(%v, %d)", c.v, c.dec), func() string { return string(appendFixed(nil, c.v, c.dec)) }); got != c.want {
			t.Errorf("appendFixed(%v, %d) = %s, want %s", c.v, c.dec, got, c.want)
		}
	}
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.000512, "0.000512"}, {0.0123456, "0.0123"}, {1.2345, "1.23"}, {12.345, "12.3"}, {150.4, "150"}, {12345.6, "12346"},
	} {
		if got := within(t, fmt.Sprintf("appendSig3(%v)", c.v), func() string { return string(appendSig3(nil, c.v)) }); got != c.want {
			t.Errorf("appendSig3(%v) = %s, want %s", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		v    uint64
		want string
	}{{0, "0"}, {5, "0.5"}, {250, "25"}, {253, "25.3"}} {
		if got := string(appendTenths(nil, c.v)); got != c.want {
			t.Errorf("appendTenths(%d) = %s, want %s", c.v, got, c.want)
		}
	}
}

// Any number appendFixed writes is valid JSON and reads back as v rounded.
func TestAppendFixedIsJSON(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.Float64().Draw(t, "v")
		dec := rapid.IntRange(0, 6).Draw(t, "dec")
		b := within(t, fmt.Sprintf("appendFixed(%v, %d)", v, dec), func() []byte { return appendFixed(nil, v, dec) })
		var got *float64
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("appendFixed(%v, %d) = %s: not JSON: %v", v, dec, b, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			if got != nil {
				t.Fatalf("appendFixed(%v) = %s, want null", v, b)
			}
			return
		}
		if tol := 0.5/math.Pow(10, float64(dec)) + math.Abs(v)*1e-15; math.Abs(*got-v) > tol*1.0000001 {
			t.Fatalf("appendFixed(%v, %d) = %s, off by more than %v", v, dec, b, tol)
		}
	})
}
