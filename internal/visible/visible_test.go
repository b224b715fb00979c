package visible

import (
	"errors"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, ünïcode, 日本", "plain text, ünïcode, 日本"},
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"ls\x1b[2K\rrm -rf ~", `ls\u001b[2K\rrm -rf ~`},
		{"\x1b]8;;http://x\x1b\\click\x1b]8;;\x1b\\", `\u001b]8;;http://x\u001b\click\u001b]8;;\u001b\`},
		{"\x9b31m", `\x9b31m`},           // a lone byte, not UTF-8
		{"\u009b31m", `\u009b31m`},       // C1 CSI, as a rune
		{"abc\u202edef", `abc\u202edef`}, // right-to-left override
		{"a\u200bb\u2066c\u2069", `a\u200bb\u2066c\u2069`},
		{"tag\U000e0041", `tag\U000e0041`},     // an invisible tag character
		{"\ufffd\xff", `\ufffd\xff`},           // U+FFFD itself and a bad byte
		{"a\u00a0b\u2028c", `a\u00a0b\u2028c`}, // blanks other than the space
		{"\x7f\x00", `\u007f\u0000`},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestArguments(t *testing.T) {
	padded := `{"command": "echo ` + strings.Repeat("a", 500) + `; touch /tmp/x"}`
	got, err := Arguments([]byte(padded))
	if err != nil || got != `{"command":"echo `+strings.Repeat("a", 500)+`; touch /tmp/x"}` {
		t.Errorf("Arguments(padded) = %q, %v; want it whole, compacted", got, err)
	}
	// Spacing between tokens goes; spacing in strings stays.
	if got, _ := Arguments([]byte("{\n\"a\" :\t\"x  y\"\n}")); got != `{"a":"x  y"}` {
		t.Errorf("got %q", got)
	}
	// Text that is not JSON is shown as it came, escaped.
	if got, _ := Arguments([]byte("not json\x1b[2K")); got != `not json\u001b[2K` {
		t.Errorf("got %q", got)
	}
	// At the cap it is shown; one byte more is refused.
	fits := `"` + strings.Repeat("a", MaxArguments-2) + `"`
	if got, err := Arguments([]byte(fits)); err != nil || got != fits {
		t.Errorf("arguments of exactly MaxArguments bytes: %v", err)
	}
	if _, err := Arguments([]byte(`"` + strings.Repeat("a", MaxArguments-1) + `"`)); !errors.Is(err, ErrTooLong) {
		t.Errorf("arguments over MaxArguments: got %v, want ErrTooLong", err)
	}
	// The cap counts the escapes: a few thousand control characters are
	// too long once shown.
	if _, err := Arguments([]byte(strings.Repeat("\x1b", MaxArguments/4))); !errors.Is(err, ErrTooLong) {
		t.Errorf("escaped arguments over MaxArguments: got %v, want ErrTooLong", err)
	}
}
