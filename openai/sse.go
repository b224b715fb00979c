package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	goopenai "github.com/sashabaranov/go-openai"
)

// This file reads a stream's events off the body of the reply. go-openai
// sends the request and reads the status and any error body; the events
// of a stream that began are read here: go-openai's reader matched two
// regular expressions and copied every line twice, and read a line of any
// length.

// maxEventBytes bounds one line of a stream, and so one event: the
// Responses API's response.completed repeats the whole response (its text,
// every call's arguments, encrypted reasoning, the tools it was given), so
// the bound is generous; a server that sends a longer line is refused
// rather than read into memory without end.
const maxEventBytes = 32 << 20

// errEventTooLong is the error of a line longer than maxEventBytes.
var errEventTooLong = fmt.Errorf("the model endpoint sent a stream line of more than %d MiB", maxEventBytes>>20)

// eventSource yields the data of a stream's events, one at a time, until
// io.EOF: go-openai's stream or an sseReader.
type eventSource interface {
	RecvRaw() ([]byte, error)
}

// sseReader reads the data of the events of a server-sent event stream by
// go-openai's rules (its streamReader.processLines), so that a stream
// reads as it did through go-openai:
//   - each line is trimmed of white space; a line "data:" is data, the
//     white space after the colon dropped; "data: [DONE]" ends the stream;
//   - any other line (event:, id:, a comment, a blank line) is kept for
//     an error and counted; more than limit of them in a row is an error;
//   - a data line that starts {"error": is kept for an error as well, and
//     the stream ends with that error at the next line;
//   - at the end of the body, or on an error reading it, the lines kept
//     are read as one JSON error reply; if they are one, that error ends
//     the stream;
//   - a last line without a newline is not read.
type sseReader struct {
	body       io.Reader
	buf        []byte // buf[start:end] is read and not yet taken
	start, end int
	scanned    int   // buf[start:start+scanned] holds no newline
	err        error // the body's error, once it returned one
	done       bool  // [DONE] came
	limit      uint  // the client's EmptyMessagesLimit
	// kept holds the lines kept for an error while they may still be a
	// JSON object: go-openai keeps them all, but only lines that begin
	// with { can make one, and then only as long as the event bound.
	kept     []byte
	keptDead bool
}

func newSSEReader(body io.Reader, limit uint) *sseReader {
	return &sseReader{body: body, buf: make([]byte, readSize), limit: limit}
}

var (
	dataPrefix  = []byte("data:")
	errorPrefix = []byte(`{"error":`)
)

// RecvRaw returns the data of the next event, valid until the next call,
// or io.EOF at the stream's end.
func (r *sseReader) RecvRaw() ([]byte, error) {
	if r.done {
		return nil, io.EOF
	}
	var others uint
	hasErrorPrefix := false
	for {
		line, readErr := r.line()
		if readErr != nil || hasErrorPrefix {
			if e := r.keptError(); e != nil {
				return nil, fmt.Errorf("error, %w", e)
			}
			return nil, readErr
		}
		line = bytes.TrimSpace(line)
		data, isData := bytes.CutPrefix(line, dataPrefix)
		if isData {
			data = trimRE2Space(data)
			hasErrorPrefix = bytes.HasPrefix(data, errorPrefix)
		}
		if !isData || hasErrorPrefix {
			if hasErrorPrefix {
				line = data
			}
			r.keep(line)
			if others++; others > r.limit {
				return nil, goopenai.ErrTooManyEmptyStreamMessages
			}
			continue
		}
		if string(data) == "[DONE]" {
			r.done = true
			return nil, io.EOF
		}
		return data, nil
	}
}

// trimRE2Space drops the white space of a regular expression's \s from
// the start of b, as go-openai's `^data:\s*` does.
func trimRE2Space(b []byte) []byte {
	for len(b) > 0 {
		switch b[0] {
		case ' ', '\t', '\n', '\f', '\r':
			b = b[1:]
		default:
			return b
		}
	}
	return b
}

func (r *sseReader) keep(line []byte) {
	switch {
	case r.keptDead || len(line) == 0:
	case len(r.kept) == 0 && line[0] != '{', len(r.kept)+len(line) > maxEventBytes:
		r.keptDead, r.kept = true, nil
	default:
		r.kept = append(r.kept, line...)
	}
}

// keptError is the error the kept lines make as a JSON error reply, if
// they make one.
func (r *sseReader) keptError() *goopenai.APIError {
	if len(r.kept) == 0 {
		return nil
	}
	var e *goopenai.ErrorResponse
	if json.Unmarshal(r.kept, &e) != nil || e == nil {
		return nil
	}
	return e.Error
}

// readSize is how much sseReader asks the body for at a time, as the
// bufio.Reader that go-openai reads through does (its default size): the
// tail kept for an error event (tailBuffer) then holds the same bytes at
// every event as it did.
const readSize = 4096

// line returns the next line, without its newline, valid until the next
// call. At the end of the body, what follows the last newline is dropped.
func (r *sseReader) line() ([]byte, error) {
	for empty := 0; ; {
		if i := bytes.IndexByte(r.buf[r.start+r.scanned:r.end], '\n'); i >= 0 {
			line := r.buf[r.start : r.start+r.scanned+i]
			r.start += r.scanned + i + 1
			r.scanned = 0
			return line, nil
		}
		r.scanned = r.end - r.start
		if r.err != nil {
			return nil, r.err
		}
		if r.start > 0 {
			r.end = copy(r.buf, r.buf[r.start:r.end])
			r.start = 0
		}
		if r.end >= maxEventBytes {
			r.err = errEventTooLong
			return nil, r.err
		}
		// bufio.Reader reads what room its buffer has left; a longer line
		// has it read whole buffers.
		want := r.end + readSize - r.end%readSize
		if want > len(r.buf) {
			buf := make([]byte, max(2*len(r.buf), want))
			copy(buf, r.buf[:r.end])
			r.buf = buf
		}
		n, err := r.body.Read(r.buf[r.end:want])
		r.end += n
		r.err = err
		if n == 0 && err == nil {
			if empty++; empty >= 100 {
				r.err = io.ErrNoProgress // as bufio.Reader says
			}
		}
	}
}

// events returns where the stream's events are read: the body of the
// reply that the client's HTTP layer handed over, else go-openai's stream.
func (h *retryHint) events(stream eventSource, limit uint) eventSource {
	if h.reply == nil {
		return stream
	}
	return newSSEReader(h.reply, limit)
}
