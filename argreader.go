package onion

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// This file is the reader of a model's arguments: jsontext's tokenizer
// with depth and number length bounded, and the errors it words.

// argReader reads a model's arguments with jsontext's tokenizer, depth and
// number length bounded.
type argReader struct {
	dec  *jsontext.Decoder
	buf  bytes.Buffer // the arguments' own bytes: see newArgReader
	args string
	err  error // the first syntax or limit error
}

var argReaders = sync.Pool{New: func() any {
	r := &argReader{}
	r.dec = jsontext.NewDecoder(&r.buf)
	return r
}}

// readerOptions read invalid UTF-8 as encoding/json does (each bad byte
// becomes U+FFFD) and leave repeated names to the plan, which refuses them
// for a struct's fields; inside a free-form value the last one wins, as
// in encoding/json and the validator.
var readerOptions = []jsontext.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)}

// newArgReader reads args in place. A jsontext.Decoder reads a
// bytes.Buffer's contents where they are, without copying them into a
// buffer of its own, and never writes to them (jsontext's decodeBuffer
// leaves a bytes.Buffer's bytes alone), so the string's bytes serve as
// they are: tokenizing the 56 bytes of a 4-field call took about 230 ns
// so against about 330 ns through a strings.Reader.
func newArgReader(args string) *argReader {
	r := argReaders.Get().(*argReader)
	r.buf = *bytes.NewBuffer(unsafe.Slice(unsafe.StringData(args), len(args)))
	r.dec.Reset(&r.buf, readerOptions...)
	r.args, r.err = args, nil
	return r
}

func (r *argReader) release() {
	if len(r.args) <= 64<<10 {
		r.buf = bytes.Buffer{}
		r.args = ""
		argReaders.Put(r)
	}
}

// syntaxError is JSON that is not JSON, or that passes a limit.
type syntaxError struct{ msg string }

func (e *syntaxError) Error() string { return argsNotJSON + e.msg }

// argsNotJSON begins the problem of arguments that do not parse; an
// answer's problem says "the answer" instead (problemsOf).
const argsNotJSON = "arguments are not valid JSON: "

// limitError is arguments past a bound on depth or number length.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

var (
	errTooDeep = &limitError{fmt.Sprintf("arguments nest deeper than %d levels", maxDepth)}
	errLongNum = &limitError{fmt.Sprintf("a number in the arguments is longer than %d characters", maxNumberLen)}
)

func (r *argReader) fail(err error) error {
	var le *limitError
	if !errors.As(err, &le) {
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			err = &syntaxError{msg: strings.TrimPrefix(se.Error(), "jsontext: ")}
		} else {
			err = &syntaxError{msg: err.Error()}
		}
	}
	if r.err == nil {
		r.err = err
	}
	return err
}

// peek returns the kind of the next token, or 0 at an error.
func (r *argReader) peek() jsontext.Kind {
	if r.err != nil {
		return 0
	}
	return r.dec.PeekKind()
}

func (r *argReader) open(delim jsontext.Kind) bool {
	if r.peek() != delim {
		return false
	}
	if _, err := r.dec.ReadToken(); err != nil {
		r.fail(err)
		return false
	}
	if r.dec.StackDepth() > maxDepth {
		r.fail(errTooDeep)
		return false
	}
	return true
}

func (r *argReader) close(delim jsontext.Kind) bool {
	if r.peek() != delim {
		return false
	}
	if _, err := r.dec.ReadToken(); err != nil {
		r.fail(err)
		return false
	}
	return true
}

func (r *argReader) null() bool {
	if r.peek() != 'n' {
		return false
	}
	if _, err := r.dec.ReadToken(); err != nil {
		r.fail(err)
		return false
	}
	return true
}

func (r *argReader) boolean() (bool, error) {
	v, err := r.read()
	if err != nil {
		return false, err
	}
	if k := v.Kind(); k != 't' && k != 'f' {
		return false, typeErrOf("boolean", v)
	}
	return v.Kind() == 't', nil
}

// read reads the next value whole, of any kind. The scalar readers read
// their value with it and look at its kind afterwards rather than peeking
// first: each PeekKind costs a pass over the whitespace and the state, and
// a value of the wrong kind fails the call anyway. A composite value read
// this way is only a type error; jsontext reads it without recursion, and
// explain holds the arguments to the bounds before anything else.
func (r *argReader) read() (jsontext.Value, error) {
	if r.err != nil {
		return nil, r.err
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, r.fail(err)
	}
	return v, nil
}

// nextKey reads the next object name, quoted as it is in the arguments, or
// the end of the object (end true): one peek for both. The name's bytes
// are valid until the next read. Invalid UTF-8 in a name matches no
// field's name, as the U+FFFD that encoding/json would put in its place
// would not either.
func (r *argReader) nextKey() (quoted jsontext.Value, end bool, err error) {
	switch r.peek() {
	case '}':
		if _, err := r.dec.ReadToken(); err != nil {
			return nil, false, r.fail(err)
		}
		return nil, true, nil
	case '"':
	default:
		return nil, false, r.failNext()
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, false, r.fail(err)
	}
	return v, false, nil
}

// name reads an object name as a string, as encoding/json would.
func (r *argReader) name() (string, error) {
	if r.peek() != '"' {
		return "", r.failNext()
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return "", r.fail(err)
	}
	return string(unquote(v)), nil
}

// str reads a string value.
func (r *argReader) str() (string, error) {
	v, err := r.read()
	if err != nil {
		return "", err
	}
	if v.Kind() != '"' {
		return "", typeErrOf("string", v)
	}
	// The text as it is in the arguments, with no copy, unless it holds an
	// escape or invalid UTF-8: found in one pass over plain ASCII, eight
	// bytes at a time, which jsontext has already read.
	end := int(r.dec.InputOffset())
	q := r.args[end-len(v) : end]
	if i := plainRun(q, 1); i == len(q)-1 || q[i] >= utf8.RuneSelf && strings.IndexByte(q[i:len(q)-1], '\\') < 0 && utf8.ValidString(q[i:len(q)-1]) {
		return q[1 : len(q)-1], nil
	}
	return string(unquote(v)), nil
}

// unquote returns the text of the JSON string v, invalid UTF-8 replaced.
func unquote(v jsontext.Value) []byte {
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return s
	}
	out, _ := jsontext.AppendUnquote(nil, v) // each invalid byte becomes U+FFFD, as in encoding/json
	return out
}

// number reads a number literal.
func (r *argReader) number(want string) (string, error) {
	v, err := r.read()
	if err != nil {
		return "", err
	}
	if v.Kind() != '0' {
		return "", typeErrOf(want, v)
	}
	if len(v) > maxNumberLen {
		return "", r.fail(errLongNum)
	}
	// The literal as it is in the arguments: no copy.
	end := int(r.dec.InputOffset())
	return r.args[end-len(v) : end], nil
}

// raw reads one value of any kind and returns its text, checking its depth
// and numbers on the way without recursion.
func (r *argReader) raw() ([]byte, error) {
	if r.peek() == 0 {
		return nil, r.failNext()
	}
	base := r.dec.StackDepth()
	start := int(r.dec.InputOffset())
	for {
		switch r.dec.PeekKind() {
		case '{', '[':
			if _, err := r.dec.ReadToken(); err != nil {
				return nil, r.fail(err)
			}
			if r.dec.StackDepth() > maxDepth {
				return nil, r.fail(errTooDeep)
			}
		case '}', ']':
			if _, err := r.dec.ReadToken(); err != nil {
				return nil, r.fail(err)
			}
		default:
			v, err := r.dec.ReadValue()
			if err != nil {
				return nil, r.fail(err)
			}
			if v.Kind() == '0' && len(v) > maxNumberLen {
				return nil, r.fail(errLongNum)
			}
		}
		if r.dec.StackDepth() == base {
			raw := strings.TrimLeft(r.args[start:r.dec.InputOffset()], " \t\r\n,:")
			return []byte(raw), nil
		}
	}
}

// failNext records the error that stops the next read.
func (r *argReader) failNext() error {
	if r.err != nil {
		return r.err
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return r.fail(err)
	}
	return r.fail(errors.New("unexpected token"))
}

// typeErr says what came where want was expected.
func (r *argReader) typeErr(want string) error {
	switch r.peek() {
	case '"', '0':
		v, err := r.read()
		if err != nil {
			return err
		}
		return typeErrOf(want, v)
	case 0:
		return r.failNext()
	}
	return &typeError{want: want, got: kindName(r.peek())}
}

// typeErrOf says that v came where want was expected; of a composite
// value only its first byte is looked at.
func typeErrOf(want string, v jsontext.Value) error {
	got := kindName(v.Kind())
	switch v.Kind() {
	case '"':
		got += " " + quoteValue(string(unquote(v)))
	case '0':
		got += " " + truncate(string(v), 40)
	}
	return &typeError{want: want, got: got}
}

// kindName names the JSON type of a value of kind k.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	}
	return "null"
}

type typeError struct{ want, got string }

func (e *typeError) Error() string { return "expected " + e.want + ", got " + e.got }

// end checks that nothing follows the value.
func (r *argReader) end() error {
	if r.err != nil {
		return r.err
	}
	// What is left must be JSON whitespace: looked at directly, as a
	// ReadToken that meets the end costs more than the call's last field.
	if strings.Trim(r.args[r.dec.InputOffset():], " \t\r\n") != "" {
		return r.fail(errors.New("unexpected text after the arguments object"))
	}
	return nil
}

// checkShape reads args through, holding them to the bounds on depth and
// number length, before anything that recurses sees them.
func checkShape(args string) error {
	r := newArgReader(args)
	defer r.release()
	if _, err := r.raw(); err != nil {
		return err
	}
	return r.end()
}
