package openai

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestSpecialBytes checks the eight-bytes-at-a-time search for a string's
// first byte that is not plain against the byte-at-a-time one, for words
// of bytes drawn from the edges of the classes (controls, the quote and
// backslash and their neighbours, the last ASCII byte and the first after
// it).
func TestSpecialBytes(t *testing.T) {
	edges := []byte{0, 1, 0x1f, ' ', '!', '"', '#', '[', '\\', ']', 'a', 0x7e, 0x7f, 0x80, 0x81, 0xc3, 0xfe, 0xff}
	r := rand.New(rand.NewPCG(1, 2))
	var w [8]byte
	for range 200000 {
		first := 8
		for i := range w {
			if r.IntN(6) == 0 {
				w[i] = edges[r.IntN(len(edges))]
			} else {
				w[i] = byte(0x20 + r.IntN(0x60))
			}
			if !strPlain[w[i]] && first == 8 {
				first = i
			}
		}
		m := specialBytes(binary.LittleEndian.Uint64(w[:]))
		if got := bits.TrailingZeros64(m) >> 3; got != first {
			t.Fatalf("specialBytes(%q) finds byte %d first, want %d", w, got, first)
		}
	}
}

// FuzzScanner holds the scanner to encoding/json: it accepts no input
// that is not JSON, accepts all JSON nested no deeper than it follows,
// and reads a string to the value encoding/json decodes.
func FuzzScanner(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\ud800"],"b":{}}`, `"\ud83d\ude00\" \/ \b\f\n\r\t"`,
		"\"\xff\xfe\xc3(\"", `[01]`, `1.`, `-`, `{"a" 1}`, `[1,]`, `"\u12"`, "\"\x01\"", ` null `, `1e5`, `{"a":1}{}`, `[[[[]]]]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s scanner
		s.reset(b)
		s.skip()
		ok, valid := s.end(), json.Valid(b)
		if ok && !valid {
			t.Fatalf("the scanner takes %q, which is not JSON", b)
		}
		if !ok && valid && bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) <= maxScanDepth {
			t.Fatalf("the scanner refuses %q, which is JSON", b)
		}
		var want string
		if json.Unmarshal(b, &want) != nil {
			return
		}
		s.reset(b)
		text, _ := s.text()
		if !s.end() {
			t.Fatalf("the scanner refuses the string %q", b)
		}
		if got := text.String(); got != want || string(text.appendTo([]byte("<"))) != "<"+want || !text.is(want) || text.isEmpty() != (want == "") {
			t.Fatalf("the scanner reads %q as %q, encoding/json as %q", b, got, want)
		}
	})
}
