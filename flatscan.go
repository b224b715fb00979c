package onion

import (
	"math/bits"
	"unicode/utf8"
)

// The tokens of the flat plan (flatdecode.go): whitespace, strings and
// numbers, read straight from the arguments' bytes, eight at a time where
// they can be. The result encoder quotes strings with plainRun too.

// space skips the JSON whitespace at s[i:]; inlined, it costs a
// comparison where there is none, the usual case.
func space(s string, i int) int {
	if i < len(s) && s[i] <= ' ' {
		return skipSpace(s, i)
	}
	return i
}

// skipSpace skips JSON whitespace.
func skipSpace(s string, i int) int {
	for i < len(s) && s[i] <= ' ' && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t') {
		i++
	}
	return i
}

// overflowFloat32 is reflect's Value.OverflowFloat for a float32.
func overflowFloat32(x float64) bool {
	if x < 0 {
		x = -x
	}
	return 3.40282346638528859811704183484516925440e+38 < x && x <= 1.79769313486231570814527423731704356798070e+308
}

// scanString reads the JSON string at s[i:] when it holds no escape, no
// control character and only valid UTF-8: its text is then its bytes, and
// one pass both finds its end and checks its encoding.
func scanString(s string, i int) (text string, end int, ok bool) {
	if s[i] != '"' {
		return "", i, false
	}
	start := i + 1
	for i = start; i < len(s); {
		if i+8 <= len(s) {
			// The first eight bytes here, where short strings end.
			if m := special(load8(s, i)); m != 0 {
				i += bits.TrailingZeros64(m) / 8
			} else {
				i = plainRun(s, i+8)
			}
		} else {
			i = plainRun(s, i)
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '"' {
				return s[start:i], i + 1, true
			}
			return "", i, false // a backslash or a control character
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return "", i, false
		}
		i += size
	}
	return "", i, false
}

// plainByte marks the bytes a JSON string holds as they are: ASCII but
// the quote, the backslash and the control characters.
var plainByte = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// load8 returns the 8 bytes of s from i on as a little-endian word: one
// load where the platform allows it.
func load8(s string, i int) uint64 {
	t := s[i : i+8]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
}

// special marks, with its high bit, each byte of the little-endian word
// x that is not plain (see plainByte), and maybe bytes above the first
// such: a byte's high bit is set in one of the terms when it is below ' '
// (a borrow), a quote or a backslash (zero, then a borrow), or not ASCII.
// A borrow out of a byte that is not plain may mark the bytes above it,
// but never one below: the lowest marked byte is the first not plain.
func special(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	return ((x - ones*' ') | ((x ^ (ones * '"')) - ones) | ((x ^ (ones * '\\')) - ones) | x) & highs
}

// plainRun returns the index of the first byte of s from i on that is
// not plain (see plainByte): eight bytes at a time while they are all
// plain, then one by one.
func plainRun(s string, i int) int {
	for i+8 <= len(s) {
		if m := special(load8(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
		i += 8
	}
	for i < len(s) && plainByte[s[i]] {
		i++
	}
	return i
}

// scanNumber finds the end of the JSON number at s[i:]; integer says it
// has neither a fraction nor an exponent.
func scanNumber(s string, i int) (end int, integer, ok bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i == len(s):
		return i, false, false
	case s[i] == '0':
		i++
	case '1' <= s[i] && s[i] <= '9':
		i = skipDigits(s, i+1)
	default:
		return i, false, false
	}
	integer = true
	if i < len(s) && s[i] == '.' {
		integer = false
		j := skipDigits(s, i+1)
		if j == i+1 {
			return j, false, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		integer = false
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return j, false, false
		}
		i = j
	}
	return i, integer, true
}

func skipDigits(s string, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// shortFloat reads a number literal without an exponent whose digits,
// read as an integer, are below 2^53 and whose fraction has at most 22
// digits: its value is then that integer divided by a power of ten, both
// exact, in one correctly rounded division, which is what
// strconv.ParseFloat returns for it.
func shortFloat(lit string) (float64, bool) {
	i, neg := 0, lit[0] == '-'
	if neg {
		i = 1
	}
	var m uint64
	digits, frac, dot := 0, 0, false
	for ; i < len(lit); i++ {
		c := lit[i]
		switch {
		case c == '.':
			dot = true
			continue
		case c < '0' || c > '9', digits == 19: // an exponent, or too many digits
			return 0, false
		}
		m = m*10 + uint64(c-'0')
		if m != 0 {
			digits++
		}
		if dot {
			frac++
		}
	}
	if m >= 1<<53 || frac >= len(pow10) {
		return 0, false
	}
	v := float64(m) / pow10[frac]
	if neg {
		v = -v
	}
	return v, true
}

// smallInt reads an integer literal of at most 18 digits, which cannot
// overflow an int64.
func smallInt(lit string, integer bool) (int64, bool) {
	neg := lit[0] == '-'
	digits := lit
	if neg {
		digits = lit[1:]
	}
	if !integer || len(digits) > 18 {
		return 0, false
	}
	var n int64
	for i := range len(digits) {
		n = n*10 + int64(digits[i]-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// smallUint reads a non-negative integer literal of at most 19 digits,
// which cannot overflow a uint64.
func smallUint(lit string, integer bool) (uint64, bool) {
	if !integer || lit[0] == '-' || len(lit) > 19 {
		return 0, false
	}
	var n uint64
	for i := range len(lit) {
		n = n*10 + uint64(lit[i]-'0')
	}
	return n, true
}
