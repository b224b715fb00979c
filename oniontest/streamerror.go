package oniontest

import (
	"bytes"
	"net/http"
)

// StreamError returns a Step that fails after the reply has begun, as a
// model server does when it breaks down mid-answer. Streamed, the reply is
// a 200 stream that carries the error: on Chat Completions an assistant
// chunk, then an error chunk (data: {"error": ...}, as OpenRouter sends
// it); on the Responses API response.created and response.in_progress,
// then an error event and response.failed, as api.openai.com sends them.
// Not streamed, the reply is a 500 with an OpenAI error body. code is the
// error's code and type, such as "server_error" or "insufficient_quota".
func StreamError(code, message string) Step {
	return Step{kind: stepStreamError, code: code, text: message}
}

// streamErrorReply encodes a StreamError step for Chat Completions, and
// for either wire when the request is not streamed.
func streamErrorReply(m meta, stream bool, s Step) reply {
	body := errorBody(s.text, s.code, s.code)
	if !stream {
		return reply{
			status: http.StatusInternalServerError,
			header: http.Header{"Content-Type": {"application/json"}},
			pieces: [][]byte{body},
		}
	}
	role := chunk{ID: m.id, Object: "chat.completion.chunk", Created: m.created, Model: m.model,
		Choices: []chunkChoice{{Delta: delta{Role: "assistant", Content: marshal("")}}}}
	return reply{
		status: http.StatusOK,
		header: http.Header{"Content-Type": {"text/event-stream"}},
		pieces: [][]byte{sse(marshal(role)), sse(bytes.TrimSuffix(body, []byte("\n")))},
	}
}
