package onion

import (
	"context"
	"errors"
	"fmt"

	"github.com/onionkit/onion/loop"
)

// This file is the agent's side of the model: the LanguageModel interface
// any wire implements, and the types it speaks, which are the loop's own.

// LanguageModel is a model endpoint the agent sends requests to: one
// request, one reply (see loop.LanguageModel, whose rules it is). The
// Agent's default speaks OpenAI's wires (package openai); packages
// anthropic and gemini speak theirs; WithModel plugs in any of them, or a
// local model or test double of the program's.
type LanguageModel = loop.LanguageModel

// ModelFunc turns a function into a LanguageModel.
type ModelFunc = loop.ModelFunc

// Delta is the next piece of a reply being streamed.
type Delta = loop.Delta

// Image is a picture in a message: in a prompt, or returned by a tool.
type Image = loop.Image

// ErrNoModel is the error of a run of an agent that has no model to ask:
// neither an API key nor a base URL (OPENAI_API_KEY, OPENAI_BASE_URL,
// APIKey, BaseURL), nor a client or model of the program's (WithClient,
// WithModel). NewAgent accepts such an agent, so that its tools can be
// listed and called directly; its first run fails with this error, before
// any request, saying what to set.
var ErrNoModel = errors.New("no model configured: set OPENAI_API_KEY to use OpenAI, or OPENAI_BASE_URL for a local OpenAI-compatible server (llama.cpp's llama-server, Ollama, vLLM), e.g. OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=llama3.2")

// noModel is the model of an agent that has none: it says so, once.
func noModel(context.Context, *Request, func(Delta)) (*Response, error) {
	return nil, &ModelError{Err: ErrNoModel}
}

// The conversation types. They are defined in package loop, the agent's
// deterministic core, and are the same types here.
type (
	// Message is one message of a conversation: see loop.Message.
	Message = loop.Message
	// Role says who wrote a message.
	Role = loop.Role
	// ToolRequest is one tool call as the model asked for it.
	ToolRequest = loop.ToolRequest
	// ToolDef is a tool as the model is told of it.
	ToolDef = loop.ToolDef
	// Request is one request to a LanguageModel.
	Request = loop.Request
	// Response is a LanguageModel's reply to one Request.
	Response = loop.Response
)

// The roles of a conversation.
const (
	RoleSystem    = loop.RoleSystem
	RoleUser      = loop.RoleUser
	RoleAssistant = loop.RoleAssistant
	RoleTool      = loop.RoleTool
)

// ModelError is a failed model request, described so that the agent knows
// whether to send it again: see loop.ModelError. Every provider returns one
// for every failure, wrapping its client library's error (still reachable
// with errors.As); a user's LanguageModel may return one to have its
// requests retried.
type ModelError = loop.ModelError

// WithModel makes the agent send its requests to m instead of the
// built-in Chat Completions client; BaseURL, APIKey and WithClient are
// then ignored, and so is Model when m names itself with a Name method,
// as the provider packages' models do.
func WithModel(m LanguageModel) Option {
	return optionFunc(func(c *config) error {
		if m == nil {
			return fmt.Errorf("onion.WithModel(nil): give a LanguageModel")
		}
		c.languageModel = m
		return nil
	})
}
