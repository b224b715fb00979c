package oniontest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// This file is the request side of the Gemini wire: POST
// /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse, the Gemini Developer API as
// google.golang.org/genai speaks it. The reply side is gemini_wire.go.

// GeminiURL returns the server's base URL for a Gemini client: genai's
// HTTPOptions.BaseURL, or GEMINI_BASE_URL (the client adds
// /v1beta/models/...).
func (s *Server) GeminiURL() string {
	return s.srv.URL
}

// GeminiRequest is the body of a Gemini generateContent request, decoded.
// Whatever it does not name is in [Request.Raw].
type GeminiRequest struct {
	// Model is the model named in the path ("gemini-2.5-flash").
	Model string
	// Stream is set for :streamGenerateContent.
	Stream            bool
	SystemInstruction *GeminiContent
	Contents          []GeminiContent
	// Tools are the tools as sent (functionDeclarations among them).
	Tools            []json.RawMessage
	ToolConfig       json.RawMessage
	GenerationConfig json.RawMessage
}

// GeminiContent is one content of a Gemini request: a turn of the
// conversation.
type GeminiContent struct {
	Role  string       `json:"role"`
	Parts []GeminiPart `json:"parts"`
}

// GeminiPart is one part of a content. Raw is the part exactly as sent.
type GeminiPart struct {
	Text             string                  `json:"text,omitempty"`
	Thought          bool                    `json:"thought,omitempty"`
	ThoughtSignature string                  `json:"thoughtSignature,omitempty"`
	FunctionCall     *GeminiFunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *GeminiFunctionResponse `json:"functionResponse,omitempty"`
	InlineData       *GeminiBlob             `json:"inlineData,omitempty"`
	FileData         *GeminiFileData         `json:"fileData,omitempty"`
	Raw              json.RawMessage         `json:"-"`
}

// UnmarshalJSON keeps the part's bytes in Raw.
func (p *GeminiPart) UnmarshalJSON(b []byte) error {
	type plain GeminiPart
	if err := json.Unmarshal(b, (*plain)(p)); err != nil {
		return err
	}
	p.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// GeminiFunctionCall is a function call of a model content.
type GeminiFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// GeminiFunctionResponse is the result of a call: Response is its JSON
// object, Parts the media returned with it (Gemini 3).
type GeminiFunctionResponse struct {
	ID       string            `json:"id,omitempty"`
	Name     string            `json:"name"`
	Response json.RawMessage   `json:"response,omitempty"`
	Parts    []json.RawMessage `json:"parts,omitempty"`
}

// GeminiBlob is inline data; Data is base64, as sent.
type GeminiBlob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

// GeminiFileData is data the API fetches from a URI.
type GeminiFileData struct {
	MIMEType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// geminiPath reports whether path is a Gemini generateContent path, and
// names its model and whether it streams.
func geminiPath(path string) (model string, stream, ok bool) {
	rest, found := strings.CutPrefix(path, "/v1beta/models/")
	if !found {
		rest, found = strings.CutPrefix(path, "/v1/models/")
	}
	if !found {
		return "", false, false
	}
	model, method, found := strings.Cut(rest, ":")
	if !found || model == "" || strings.Contains(model, "/") {
		return "", false, false
	}
	switch method {
	case "generateContent":
		return model, false, true
	case "streamGenerateContent":
		return model, true, true
	}
	return "", false, false
}

// decodeGemini fills r.Gemini from r.Raw, and r.Body with the same
// conversation in Chat Completions terms.
func (r *Request) decodeGemini(model string, stream bool) error {
	var wire struct {
		SystemInstruction *GeminiContent    `json:"systemInstruction"`
		Contents          []GeminiContent   `json:"contents"`
		Tools             []json.RawMessage `json:"tools"`
		ToolConfig        json.RawMessage   `json:"toolConfig"`
		GenerationConfig  json.RawMessage   `json:"generationConfig"`
	}
	if err := json.Unmarshal(r.Raw, &wire); err != nil {
		return err
	}
	g := &GeminiRequest{Model: model, Stream: stream, SystemInstruction: wire.SystemInstruction,
		Contents: wire.Contents, Tools: wire.Tools, ToolConfig: wire.ToolConfig, GenerationConfig: wire.GenerationConfig}
	r.Gemini, r.Stream = g, stream
	r.Body = g.chat()
	return g.check()
}

// geminiError is a request the Gemini API refuses, in its words.
type geminiError struct {
	status int
	state  string
	msg    string
}

func (e *geminiError) Error() string { return e.msg }

// geminiRefusal is the reply to a request decodeGemini refused.
func geminiRefusal(err error) (reply, bool) {
	var ge *geminiError
	if !errors.As(err, &ge) {
		return reply{}, false
	}
	return geminiErrorReply(ge.status, ge.state, ge.msg, 0), true
}

// check refuses, as the Gemini API does, a conversation whose function
// responses do not answer the calls of the model content before them
// (as many, by name and order), and, for Gemini 3 models, one whose
// current turn (the contents after the last user text) has a function
// call content whose first call carries no thought signature.
func (g *GeminiRequest) check() error {
	if len(g.Contents) == 0 {
		return &geminiError{http.StatusBadRequest, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified\n"}
	}
	turn := 0 // the first content of the current turn
	for i, c := range g.Contents {
		if c.Role != "model" && !onlyResponses(c) {
			turn = i + 1
		}
	}
	for i, c := range g.Contents {
		calls := functionCalls(c)
		if len(calls) == 0 {
			continue
		}
		if i >= turn && gemini3(g.Model) && calls[0].ThoughtSignature == "" {
			return &geminiError{http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf(
				"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, "+
					"and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. "+
					"Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", calls[0].FunctionCall.Name, i+1)}
		}
		if i+1 == len(g.Contents) {
			continue // the model is to go on from its own call
		}
		var responses []GeminiPart
		for _, p := range g.Contents[i+1].Parts {
			if p.FunctionResponse != nil {
				responses = append(responses, p)
			}
		}
		if len(responses) != len(calls) {
			return &geminiError{http.StatusBadRequest, "INVALID_ARGUMENT",
				"Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn."}
		}
		for k, call := range calls {
			fc, fr := call.FunctionCall, responses[k].FunctionResponse
			if fc.ID != "" && fr.ID != fc.ID {
				return &geminiError{http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf(
					"The function response at position %d has id %q where its function call has id %q.", k+1, fr.ID, fc.ID)}
			}
			if fr.Name != fc.Name {
				return &geminiError{http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf(
					"The function response at position %d is named %q where its function call is named %q.", k+1, fr.Name, fc.Name)}
			}
		}
	}
	return nil
}

// gemini3 reports whether model checks thought signatures: any model
// after Gemini 2.
func gemini3(model string) bool {
	return !strings.HasPrefix(model, "gemini-1") && !strings.HasPrefix(model, "gemini-2")
}

func functionCalls(c GeminiContent) []GeminiPart {
	var out []GeminiPart
	for _, p := range c.Parts {
		if p.FunctionCall != nil {
			out = append(out, p)
		}
	}
	return out
}

// onlyResponses reports whether c carries function responses and
// nothing but their media.
func onlyResponses(c GeminiContent) bool {
	has := false
	for _, p := range c.Parts {
		switch {
		case p.FunctionResponse != nil:
			has = true
		case p.InlineData != nil || p.FileData != nil || p.Text != "":
		default:
			return false
		}
	}
	return has
}

// chat is the request's conversation as a Chat Completions request: the
// system instruction as a system message, user contents as user messages
// and function responses as tool messages (their content the response's
// "output" or "error" when it is a string, its JSON otherwise), model contents as
// assistant messages with their function calls as tool calls (the call's
// id, or "" when it came without). Thoughts and media have no place in
// it and are left out.
func (g *GeminiRequest) chat() openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: g.Model, Stream: g.Stream}
	if g.SystemInstruction != nil {
		if text := partsText(g.SystemInstruction.Parts); text != "" {
			req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: text})
		}
	}
	for _, c := range g.Contents {
		if c.Role == "model" {
			m := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: partsText(c.Parts)}
			for _, p := range c.Parts {
				if fc := p.FunctionCall; fc != nil {
					args := string(fc.Args)
					if args == "" {
						args = "{}"
					}
					m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: fc.ID, Type: openai.ToolTypeFunction,
						Function: openai.FunctionCall{Name: fc.Name, Arguments: args}})
				}
			}
			req.Messages = append(req.Messages, m)
			continue
		}
		if text := partsText(c.Parts); text != "" || !onlyResponses(c) {
			req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text})
		}
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil {
				req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool,
					ToolCallID: fr.ID, Name: fr.Name, Content: responseText(fr.Response)})
			}
		}
	}
	for _, raw := range g.Tools {
		var t struct {
			FunctionDeclarations []struct {
				Name                 string          `json:"name"`
				Description          string          `json:"description"`
				Parameters           json.RawMessage `json:"parameters"`
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		}
		if json.Unmarshal(raw, &t) != nil {
			continue
		}
		for _, d := range t.FunctionDeclarations {
			def := &openai.FunctionDefinition{Name: d.Name, Description: d.Description}
			switch {
			case len(d.ParametersJSONSchema) > 0:
				def.Parameters = d.ParametersJSONSchema
			case len(d.Parameters) > 0:
				def.Parameters = d.Parameters
			}
			req.Tools = append(req.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: def})
		}
	}
	return req
}

// partsText is the text of parts that are not thoughts, joined.
func partsText(parts []GeminiPart) string {
	var b strings.Builder
	for _, p := range parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// responseText is a function response as text: its "output", or a
// failed call's "error", when that is a string, else its JSON.
func responseText(resp json.RawMessage) string {
	var out struct {
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	if json.Unmarshal(resp, &out) == nil {
		switch {
		case out.Output != nil:
			return *out.Output
		case out.Error != nil:
			return *out.Error
		}
	}
	return string(resp)
}
