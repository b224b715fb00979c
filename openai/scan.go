package openai

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is the JSON reader of the streams' hot path. A stream sends a
// chunk of a few hundred bytes for every few characters of text; decoding
// each into Go values with encoding/json cost most of a delta's time and
// all of its allocations. scanner walks a chunk once, checking its syntax
// as encoding/json does, and hands the wire the few strings it reads as
// they sit in the chunk, unquoted only when they must be.
//
// It reads only what it reads plainly. A syntax error, a field of a type
// the wire does not expect, a name that appears twice, or a name with an
// escape, an upper-case letter or a byte outside ASCII (which encoding/json
// might match to a field without regard to case) makes it give up, and
// the chunk goes to encoding/json, whose values and errors are then the
// wire's. So the scanner need only be right about what it accepts:
// FuzzScanner holds its verdict on syntax to encoding/json's, and the
// streams' differential fuzz tests hold what it reads to it.

// maxScanDepth is how deep the scanner follows nested values; a chunk
// nested deeper goes to encoding/json, which allows 10,000 levels.
const maxScanDepth = 64

// scanner reads one JSON value from data.
type scanner struct {
	data   []byte
	pos    int
	depth  int
	failed bool // the value is not one the scanner reads: ask encoding/json
}

func (s *scanner) reset(data []byte) {
	*s = scanner{data: data}
}

// fail gives up: every later read finds nothing.
func (s *scanner) fail() {
	s.failed = true
	s.pos = len(s.data)
}

// peek skips white space and returns the next byte, 0 at the end.
func (s *scanner) peek() byte {
	if s.pos < len(s.data) && s.data[s.pos] > ' ' {
		return s.data[s.pos]
	}
	return s.peekSpace()
}

func (s *scanner) peekSpace() byte {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; c {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return c
		}
	}
	return 0
}

// end reports whether the value read was the whole input, but for white
// space, and the scanner never gave up.
func (s *scanner) end() bool {
	s.peek()
	return !s.failed && s.pos == len(s.data)
}

// null reads a null if one comes next.
func (s *scanner) null() bool {
	if s.peek() != 'n' {
		return false
	}
	s.literal("null")
	return !s.failed
}

// object reads the opening of an object; false (having given up) if the
// next value is not one.
func (s *scanner) object() bool {
	if s.peek() != '{' {
		s.fail()
		return false
	}
	s.pos++
	if s.depth++; s.depth > maxScanDepth {
		s.fail()
		return false
	}
	return true
}

// member reads the name of the object's next member and the colon after
// it; false at the object's end. first says no member was read yet.
// special says the name holds an escape or a byte outside ASCII.
func (s *scanner) member(first bool) (name []byte, special, ok bool) {
	c := s.peek()
	if c == '}' {
		s.pos++
		s.depth--
		return nil, false, false
	}
	if !first {
		if c != ',' {
			s.fail()
			return nil, false, false
		}
		s.pos++
		c = s.peek()
	}
	if c != '"' {
		s.fail()
		return nil, false, false
	}
	name, special = s.str()
	if s.peek() != ':' {
		s.fail()
		return nil, false, false
	}
	s.pos++
	return name, special, true
}

// other reads the value of a member whose name is not one of the names
// read (which the member's name is not equal to), giving up if
// encoding/json might match it to one of them without regard to case:
// when it holds an escape or a byte outside ASCII (which can fold to
// ASCII), or has the length of one of them.
func (s *scanner) other(name []byte, special bool, read []string) {
	if special {
		s.fail()
		return
	}
	for _, r := range read {
		if len(r) == len(name) && asciiEqualFold(name, r) {
			s.fail()
			return
		}
	}
	s.skip()
}

// asciiEqualFold reports whether the ASCII name is r, lower-case ASCII,
// without regard to case.
func asciiEqualFold(name []byte, r string) bool {
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != r[i] {
			return false
		}
	}
	return true
}

// array reads the opening of an array; false (having given up) if the
// next value is not one.
func (s *scanner) array() bool {
	if s.peek() != '[' {
		s.fail()
		return false
	}
	s.pos++
	if s.depth++; s.depth > maxScanDepth {
		s.fail()
		return false
	}
	return true
}

// elem reports whether the array has another element, and reads up to it.
func (s *scanner) elem(first bool) bool {
	c := s.peek()
	if c == ']' {
		s.pos++
		s.depth--
		return false
	}
	if !first {
		if c != ',' {
			s.fail()
			return false
		}
		s.pos++
	}
	return !s.failed
}

// skip reads the next value, whatever it is.
func (s *scanner) skip() {
	switch c := s.peek(); {
	case c == '{':
		s.object()
		for first := true; ; first = false {
			if _, _, ok := s.member(first); !ok {
				return
			}
			s.skip()
		}
	case c == '[':
		s.array()
		for first := true; s.elem(first); first = false {
			s.skip()
		}
	case c == '"':
		s.str()
	case c == 't':
		s.literal("true")
	case c == 'f':
		s.literal("false")
	case c == 'n':
		s.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		s.number()
	default:
		s.fail()
	}
}

// value reads a value and returns its bytes as they are, nil for null
// (or when the scanner gave up).
func (s *scanner) value() []byte {
	s.peek()
	start := s.pos
	s.skip()
	if s.failed {
		return nil
	}
	if v := s.data[start:s.pos]; string(v) != "null" {
		return v
	}
	return nil
}

func (s *scanner) literal(lit string) {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		s.fail()
		return
	}
	s.pos += len(lit)
}

// number reads a number and returns its text.
func (s *scanner) number() []byte {
	d, start := s.data, s.pos
	i := start
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		i = digits(d, i)
	default:
		s.fail()
		return nil
	}
	if i < len(d) && d[i] == '.' {
		if i++; i == len(d) || d[i] < '0' || d[i] > '9' {
			s.fail()
			return nil
		}
		i = digits(d, i)
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		if i++; i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i == len(d) || d[i] < '0' || d[i] > '9' {
			s.fail()
			return nil
		}
		i = digits(d, i)
	}
	s.pos = i
	return d[start:i]
}

func digits(d []byte, i int) int {
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		i++
	}
	return i
}

// integer reads a number that encoding/json would store in an int, or a
// null (ok with isNull).
func (s *scanner) integer() (v int, isNull bool) {
	if s.null() {
		return 0, true
	}
	if c := s.peek(); c != '-' && (c < '0' || c > '9') {
		s.fail()
		return 0, false
	}
	n := s.number()
	neg := len(n) > 0 && n[0] == '-'
	if neg {
		n = n[1:]
	}
	// Fractions, exponents and numbers near the edge of an int go to
	// encoding/json, which refuses or takes them as it does.
	if len(n) == 0 || len(n) > 18 {
		s.fail()
		return 0, false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			s.fail()
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	if neg {
		v = -v
	}
	return v, false
}

// text reads a string, or a null (isNull). It gives up on any other value:
// encoding/json refuses it for a string field.
func (s *scanner) text() (t jsonText, isNull bool) {
	switch s.peek() {
	case '"':
		raw, special := s.str()
		return jsonText{raw: raw, esc: special && needsUnquote(raw)}, false
	case 'n':
		s.literal("null")
		return jsonText{}, true
	}
	s.fail()
	return jsonText{}, false
}

// strPlain marks the bytes a string holds as they are: not a quote, a
// backslash, a control character or a byte outside ASCII.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Words of eight bytes, for reading a string eight bytes at a time.
const (
	ones   = 0x0101010101010101
	highs  = 0x8080808080808080
	quotes = '"' * ones
	slants = '\\' * ones
	spaces = ' ' * ones
)

// specialBytes has the high bit set of each of the eight bytes of w (the
// first at the bottom) that is a quote, a backslash, a control character
// or outside ASCII, and maybe of bytes after such a one, never before:
// the lowest bit set is the first such byte. These are the tests of "Bit
// Twiddling Hacks" (Sean Eron Anderson): (x-n)&^x has the high bit set
// where a byte is below n (n at most 0x80), and a borrow only carries
// from a byte that is; x^c is below 1 where a byte equals c; w itself has
// it where a byte is outside ASCII.
func specialBytes(w uint64) uint64 {
	q, b := w^quotes, w^slants
	return (((w - spaces) &^ w) | ((q - ones) &^ q) | ((b - ones) &^ b) | w) & highs
}

// str reads a string and returns its bytes between the quotes, as they
// are, and whether they hold an escape or a byte outside ASCII.
func (s *scanner) str() (raw []byte, special bool) {
	d := s.data
	start := s.pos + 1
	for i := start; i < len(d); {
		// Eight bytes at a time to the next byte that is not plain.
		if len(d)-i >= 8 {
			m := specialBytes(binary.LittleEndian.Uint64(d[i:]))
			if m == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(m) >> 3
		} else if strPlain[d[i]] {
			i++
			continue
		}
		switch c := d[i]; {
		case c == '"':
			s.pos = i + 1
			return d[start:i], special
		case c == '\\':
			special = true
			if i+1 == len(d) {
				s.fail()
				return nil, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(d)-i < 6 || !isHex(d[i+2]) || !isHex(d[i+3]) || !isHex(d[i+4]) || !isHex(d[i+5]) {
					s.fail()
					return nil, false
				}
				i += 6
			default:
				s.fail()
				return nil, false
			}
		case c < 0x20:
			s.fail()
			return nil, false
		default: // outside ASCII: encoding/json takes invalid UTF-8 too
			special = true
			i++
		}
	}
	s.fail()
	return nil, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// needsUnquote reports whether the string of JSON whose bytes between the
// quotes are raw, which hold an escape or a byte outside ASCII, has a
// value other than those bytes.
func needsUnquote(raw []byte) bool {
	for _, c := range raw {
		if c == '\\' {
			return true
		}
	}
	return !utf8.Valid(raw)
}

// jsonText is a string of a chunk, as the scanner found it: its bytes
// between the quotes, to be unquoted when esc says so. A string decoded by
// encoding/json is held with esc false.
type jsonText struct {
	raw []byte
	esc bool
}

// isEmpty reports whether the string is "": a string that is not has raw
// bytes, and unquoting never makes them nothing.
func (t jsonText) isEmpty() bool { return len(t.raw) == 0 }

// String is the string's value.
func (t jsonText) String() string {
	if !t.esc {
		return string(t.raw)
	}
	return string(appendUnquote(make([]byte, 0, len(t.raw)), t.raw))
}

// is reports whether the string's value is v, without allocating unless
// it must be unquoted.
func (t jsonText) is(v string) bool {
	if !t.esc {
		return string(t.raw) == v
	}
	return t.String() == v
}

// appendTo appends the string's value to dst.
func (t jsonText) appendTo(dst []byte) []byte {
	if !t.esc {
		return append(dst, t.raw...)
	}
	return appendUnquote(dst, t.raw)
}

// appendUnquote appends the value of the JSON string whose bytes between
// the quotes are s, which the scanner has read, to dst, as encoding/json
// decodes it (its unquoteBytes): escapes read, a surrogate half that is
// not part of a pair and invalid UTF-8 each made U+FFFD.
func appendUnquote(dst, s []byte) []byte {
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			switch e := s[r+1]; e {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				rr := hex4(s[r+2 : r+6])
				r += 6
				if utf16.IsSurrogate(rr) {
					if len(s)-r >= 6 && s[r] == '\\' && s[r+1] == 'u' {
						if dec := utf16.DecodeRune(rr, hex4(s[r+2:r+6])); dec != unicode.ReplacementChar {
							dst = utf8.AppendRune(dst, dec)
							r += 6
							continue
						}
					}
					rr = unicode.ReplacementChar
				}
				dst = utf8.AppendRune(dst, rr)
				continue
			default: // '"', '\\', '/'
				dst = append(dst, e)
			}
			r += 2
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			dst = utf8.AppendRune(dst, rr)
			r += size
		}
	}
	return dst
}

// hex4 reads four hex digits the scanner has checked.
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
