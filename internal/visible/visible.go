// Package visible writes text from outside, such as a model's tool-call
// arguments, for a person to read and approve: all of it, with whatever a
// terminal or a host would act on instead of showing (control characters,
// ANSI escape sequences, newlines), or a reader would not see or would see
// reordered (bidirectional overrides, zero-width and other format
// characters), written as an escape. Every question that asks a person
// whether a call may run shows its arguments through Arguments: what is
// approved is what was shown, or nothing is asked.
package visible

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxArguments is the most a question shows of a call's arguments, in
// bytes as shown. Arguments longer than that are not cut (what is cut
// off could hide what runs): they are not shown, and the call is not asked
// about.
const MaxArguments = 32 << 10

// ErrTooLong is the error, wrapped, of arguments too long to show.
var ErrTooLong = errors.New("too long to show")

// Arguments is args as a person is asked about them: JSON without the
// model's spacing between tokens (which could push the rest out of view),
// or the text as it came when it is not JSON, through String. Arguments
// that are longer than MaxArguments so shown are an error that wraps
// ErrTooLong; the caller says how to approve the call otherwise.
func Arguments(args []byte) (string, error) {
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		b.Reset()
		b.Write(args)
	}
	s := String(b.String())
	if len(s) > MaxArguments {
		return "", fmt.Errorf("the arguments are %d bytes as shown, %w (at most %d)", len(s), ErrTooLong, MaxArguments)
	}
	return s, nil
}

// String is s with every rune that is not printable written as an escape
// in JSON's form: \n, \r, \t, \u001b, \u202e (and \U000e0041 beyond the
// basic plane), and each byte that is not UTF-8 as \xff. Inside a JSON
// string the escapes mean what the runes did; the space is the only
// blank left as it is.
func String(s string) string {
	i := strings.IndexFunc(s, hidden)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for s = s[i:]; s != ""; {
		r, n := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case !hidden(r):
			b.WriteString(s[:n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r > 0xFFFF:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		s = s[n:]
	}
	return b.String()
}

// hidden reports whether r is not shown as itself: every rune but the
// printable ones (letters, marks, numbers, punctuation, symbols) and the
// ASCII space, and U+FFFD, which also stands for bytes that are not UTF-8.
func hidden(r rune) bool {
	return r == utf8.RuneError || r != ' ' && !unicode.IsPrint(r)
}
