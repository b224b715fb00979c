package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lineTransport is the SDK's stdio transport made forgiving, as JSON-RPC
// 2.0 asks: a line that is not JSON is answered with a parse error
// (-32700), one that is JSON but no JSON-RPC message with an invalid
// request error (-32600), and the server goes on reading. The SDK's own
// transport ends the session at the first such line.
type lineTransport struct {
	in      io.Reader
	out     io.Writer
	maxLine int // bytes a line may hold, without its newline
}

// Connect implements mcp.Transport.
func (t *lineTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	out := &lockedWriter{w: t.out}
	in := &messageReader{in: bufio.NewReader(t.in), out: out, maxLine: t.maxLine}
	var closer io.Closer = io.NopCloser(nil)
	if c, ok := t.in.(io.Closer); ok {
		closer = c
	}
	return (&mcp.IOTransport{
		Reader:        readCloser{in, closer},
		Writer:        out,
		MaxLineLength: -1, // the messageReader bounds lines itself
	}).Connect(ctx)
}

// lockedWriter lets the SDK's messages and the reader's error answers
// share one output without interleaving. The SDK writes each message,
// newline included, in one Write.
type lockedWriter struct {
	mu sync.Mutex // guards w
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close does nothing: stdout stays open for whoever else holds it.
func (l *lockedWriter) Close() error { return nil }

type readCloser struct {
	io.Reader
	io.Closer
}

// messageReader passes on the lines of in that are JSON-RPC messages and
// answers the others on out itself.
type messageReader struct {
	in      *bufio.Reader
	out     io.Writer
	maxLine int
	pending []byte // the rest of the message being passed on
}

func (r *messageReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		line, long, err := r.line()
		switch {
		case long:
			r.answer(rpcError(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the message is over %d bytes", r.maxLine)))
		case len(bytes.TrimSpace(line)) == 0:
		default:
			if answer := refusal(line); answer != nil {
				r.answer(answer)
			} else {
				// A last line without a newline is passed on first; the
				// reader's error comes back at the next Read.
				r.pending = append(line, '\n')
			}
		}
		if err != nil && len(r.pending) == 0 {
			return 0, err
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// answer writes an error answer. If it cannot be written, the SDK's own
// next write fails the same way and ends the session.
func (r *messageReader) answer(msg []byte) { _, _ = r.out.Write(msg) }

// line returns the next line without its line ending, or reports that it
// was longer than maxLine bytes, in which case its bytes are skipped, never
// kept.
func (r *messageReader) line() (line []byte, long bool, err error) {
	for {
		chunk, err := r.in.ReadSlice('\n')
		if !long && len(line)+len(chunk) > r.maxLine+2 { // +2: a CRLF ending
			long, line = true, nil
		}
		if !long {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), long, err
	}
}

// refusal is the answer to line when it is not a JSON-RPC message (or a
// batch of them), or nil when it is one.
func refusal(line []byte) []byte {
	if !json.Valid(line) {
		var v any
		msg := "parse error: the line is not JSON"
		if err := json.Unmarshal(line, &v); err != nil {
			msg += " (" + err.Error() + ")"
		}
		return rpcError(nil, jsonrpc.CodeParseError, msg)
	}
	trimmed := bytes.TrimSpace(line)
	if trimmed[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(trimmed, &batch); err != nil || len(batch) == 0 {
			return rpcError(nil, jsonrpc.CodeInvalidRequest, "invalid request: an empty batch")
		}
		for _, m := range batch {
			if _, err := jsonrpc.DecodeMessage(m); err != nil {
				return rpcError(nil, jsonrpc.CodeInvalidRequest, "invalid request: a batch holds a message that is not JSON-RPC 2.0 ("+err.Error()+")")
			}
		}
		return nil
	}
	if _, err := jsonrpc.DecodeMessage(trimmed); err != nil {
		return rpcError(requestID(trimmed), jsonrpc.CodeInvalidRequest, "invalid request: not a JSON-RPC 2.0 message ("+err.Error()+")")
	}
	return nil
}

// requestID is the id of a message that could not be read otherwise, when
// it has a usable one, so that the answer reaches the request it is about.
func requestID(msg []byte) json.RawMessage {
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(msg, &head) != nil || len(head.ID) == 0 {
		return nil
	}
	switch head.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return head.ID
	}
	return nil
}

// rpcError is a JSON-RPC error response line.
func rpcError(id json.RawMessage, code int64, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	return append(b, '\n')
}
