package onion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// A Tool is one function a model can call: a name, a description, a JSON
// Schema for its parameters, and the Go code behind them. Build tools with
// NewTool, ToolsFrom or NewRawTool, or let NewAgent build them from the
// values it is given. A Tool is immutable and safe for concurrent use.
type Tool struct {
	toolConfig        // as its options and doc comment set it, defaults filled in
	source     string // where the tool came from, for error messages
	signature  string // Go-syntax signature for DescribeTools

	params *paramSchema
	invoke func(ctx context.Context, args string) (any, error)
	// origin is the Go value the tool was made of — a struct instance and
	// method, or a named func — to tell the same value passed twice from
	// two tools that share a name; nil when unknown.
	origin any
	// result is the Go result type, nil when unknown (raw tools) or none.
	result     reflect.Type
	resultHint string
	// flatResult is set when values of result cannot nest without bound,
	// so encoding one needs no walk for its depth first.
	flatResult bool
	// resultEnc writes result's JSON without encoding/json when result
	// is a scalar or a struct of scalars (encode_scalar.go); nil otherwise.
	resultEnc *scalarEncoder
	strict    bool // sent in strict form, by a Strict agent
	// generatedCall is set when invoke runs the func through its
	// generated Call (gencall.go) rather than by reflection.
	generatedCall bool
	// sub is the agent the tool hands its task to when it is an agent
	// given as a tool (agentTool), nil for any other tool. Such a tool
	// returns soon after its context ends (the sub-run's own calls are cut
	// then), so a canceled call waits for it rather than leaving it
	// running: nothing it reports comes after its caller's run is over.
	sub *Agent
}

// ToolOption configures a tool built by NewTool, ToolsFrom or NewRawTool.
// An Intent is a ToolOption too.
type ToolOption interface {
	applyTool(*toolConfig)
}

type toolConfig struct {
	name        string
	named       bool // set by Name
	description string
	intent      Intent
	idempotent  bool
	additive    bool // set by Additive
	approve     bool
	approveIf   func(context.Context, Call) (bool, error)
	noApproval  bool   // set by NoApproval
	goName      string // the Go name of the func or method, for Method
	closer      io.Closer
}

type toolOptionFunc func(*toolConfig)

func (f toolOptionFunc) applyTool(c *toolConfig) { f(c) }

// Name sets the tool's name, instead of the snake_case form of the Go name.
func Name(name string) ToolOption {
	return toolOptionFunc(func(c *toolConfig) { c.name, c.named = name, true })
}

// Description sets the tool's description, instead of the first paragraph of
// the Go doc comment; the text is sent as it is given.
//
// Given to NewAgent, it describes the agent as a tool of other agents:
// what the agent is for, which a lead's model reads to decide when to hand
// it a task.
func Description(text string) ToolOption { return description(text) }

// description is the option Description makes: for a tool, and for an
// agent given as a tool.
type description string

func (d description) applyTool(c *toolConfig) { c.description = string(d) }

func (d description) applyAgent(c *config) error {
	c.description = string(d)
	return nil
}

// Idempotent marks a write as safe to run again with the same call: the
// agent may then retry it (see ToolRetries), passing the same
// Call.IdempotencyKey to every attempt.
func Idempotent() ToolOption {
	return toolOptionFunc(func(c *toolConfig) { c.idempotent = true })
}

// Additive marks a write as one that only adds: it creates what was not
// there and never changes or removes what was (appending to a log, adding
// a task). MCP hosts are told so (destructiveHint false); any other write
// is advertised as one that may change or remove things. The directive
// //onion:additive in the doc comment says the same.
func Additive() ToolOption {
	return toolOptionFunc(func(c *toolConfig) { c.additive = true })
}

// ParamNames names the parameters of a func whose source cannot give them:
// a func literal, a func made at run time, a func of a binary built without
// its source. Give one name for each parameter after a context.Context, in
// order, such as onion.ParamNames("city", "days") for func(city string,
// days int); the names are the JSON properties the model sends. They are
// used instead of the source's, if it has any.
func ParamNames(names ...string) ToolOption {
	return paramNamesOption(names)
}

// paramNamesOption is ParamNames: NewTool reads it before the func is
// bound, so applying it does nothing.
type paramNamesOption []string

func (paramNamesOption) applyTool(*toolConfig) {}

// paramNamesOf returns the names the last ParamNames among opts gives, or
// nil.
func paramNamesOf(opts []ToolOption) []string {
	var names []string
	for _, o := range opts {
		if p, ok := o.(paramNamesOption); ok {
			names = append([]string{}, p...)
		}
	}
	return names
}

// RequireApproval makes every call of the tool wait for the agent's
// Approver. Without an approver the call is denied.
func RequireApproval() ToolOption {
	return toolOptionFunc(func(c *toolConfig) { c.approve = true })
}

// NoApproval says that the tool's calls run without asking the agent's
// Approver, which is the default. Like every option it overrides the doc
// comment (an //onion:approve there), and it undoes a RequireApproval or
// ApproveIf given before it. Say it, with Description and an intent, for a tool
// whose doc comment cannot be read (a binary built with -trimpath and run
// without its source or generated facts): NewAgent refuses such a tool
// unless its options say whether it needs approval, since a lost
// //onion:approve would otherwise go unnoticed.
func NoApproval() ToolOption {
	return toolOptionFunc(func(c *toolConfig) { c.approve, c.approveIf, c.noApproval = false, nil, true })
}

// Method applies opts only to the tool of the Go method called name, among
// the tools ToolsFrom makes of a struct instance, so that one method can
// be given an option without editing its doc comment:
//
//	tools, err := onion.ToolsFrom(todos, onion.Method("Remove", onion.RequireApproval()))
//
// ToolsFrom fails when the instance has no method called name. Given to
// NewAgent with struct instances, Method applies to the method called name
// of each of them, and NewAgent fails when none has one:
//
//	a, err := onion.NewAgent("todo", todos, onion.Method("Remove", onion.RequireApproval()))
//
// Given to NewTool, Method applies to a bound method value of that name
// (todos.Remove).
func Method(name string, opts ...ToolOption) ToolOption {
	return methodOption{name: name, opts: opts}
}

type methodOption struct {
	name string
	opts []ToolOption
}

func (m methodOption) applyTool(c *toolConfig) {
	if c.goName != m.name {
		return
	}
	for _, o := range m.opts {
		o.applyTool(c)
	}
}

// ApproveIf asks the agent's Approver only for the calls pred reports true
// for, such as refunds above an amount. A predicate that fails or panics
// means ask.
func ApproveIf(pred func(ctx context.Context, c Call) (bool, error)) ToolOption {
	return toolOptionFunc(func(c *toolConfig) { c.approveIf = pred })
}

// WithCloser gives the tool a resource that Agent.Close closes, such as a
// connection the tool calls through.
func WithCloser(closer io.Closer) ToolOption {
	return toolOptionFunc(func(c *toolConfig) { c.closer = closer })
}

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Name returns the name the model calls the tool by.
func (t *Tool) Name() string { return t.name }

// Description returns the description the model reads.
func (t *Tool) Description() string { return t.description }

// Intent returns what the tool does to the world.
func (t *Tool) Intent() Intent { return t.intent }

// Idempotent reports whether the tool may safely run again for the same call.
func (t *Tool) Idempotent() bool { return t.idempotent }

// Additive reports whether the tool, a write, only adds (see Additive).
func (t *Tool) Additive() bool { return t.additive }

// NeedsApproval reports whether the call c must be approved before it runs.
// A predicate set with ApproveIf that fails or panics means it must.
func (t *Tool) NeedsApproval(ctx context.Context, c Call) (need bool) {
	if t.approve {
		return true
	}
	if t.approveIf == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			need = true
		}
	}()
	ask, err := t.approveIf(ctx, c)
	return ask || err != nil
}

// Schema returns the JSON Schema of the tool's parameters.
func (t *Tool) Schema() json.RawMessage { return slices.Clone(t.params.json) }

// ResultType returns the Go type of the tool's result, or nil for a tool
// that returns only an error, or whose result is only known at run time
// (raw tools).
func (t *Tool) ResultType() reflect.Type { return t.result }

// OutputSchema returns the JSON Schema of the tool's Go result, derived
// once per type, or nil when ResultType is nil or an image (Image, *Image
// or []Image), which the model is shown rather than sent as JSON.
func (t *Tool) OutputSchema() (json.RawMessage, error) {
	if t.result == nil || imageResult(t.result) {
		return nil, nil
	}
	b, err := resultSchema(t.result, t.resultHint)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.name, err)
	}
	return slices.Clone(b), nil
}

// Signature returns the tool's call shape in Go syntax, such as
// "search(query string, limit int) []string".
func (t *Tool) Signature() string { return t.signature }

// Definition returns the tool exactly as it is sent to a Chat Completions
// endpoint: in strict form for a tool of a Strict agent. Outside strict
// mode the parameters of a tool made of a Go func are Schema without
// "additionalProperties": false and without the pattern of a duration
// whose description says it in words, which the model needs no telling
// of: the arguments are still checked against Schema, and what it refuses
// is named in the error the model reads. A raw tool's schema is sent as
// it was given.
func (t *Tool) Definition() openai.Tool {
	d := t.def()
	return openai.Tool{
		Type: openai.ToolTypeFunction,
		Function: &openai.FunctionDefinition{
			Name:        d.Name,
			Description: d.Description,
			Parameters:  json.RawMessage(slices.Clone(d.Parameters)),
			Strict:      d.Strict,
		},
	}
}

// def is the tool as the loop and the wires take it. Its Parameters are
// the tool's own bytes, which nobody writes to.
func (t *Tool) def() ToolDef {
	params := t.params.json
	if t.params.sent != nil {
		params = t.params.sent
	}
	if t.strict {
		params = t.params.strictJSON // made by strictTool
	}
	return ToolDef{Name: t.name, Description: t.description, Parameters: params, Strict: t.strict}
}

// Call runs the tool as the model path does: argsJSON is the model's
// arguments, and the result is the text the model would read. Arguments
// that do not fit the schema, a tool error and a panic all come back as a
// non-nil error, whose text is what the model is told.
//
// A tool that returns an Image, *Image or []Image has images, which the
// model is shown: Call returns their loop.ImageNote in the text's place,
// without the images (a run, and drive.RunCall, keep them).
func (t *Tool) Call(ctx context.Context, argsJSON string) (string, error) {
	text, images, err := t.output(ctx, argsJSON)
	if err != nil || len(images) == 0 {
		return text, err
	}
	return loop.ImageNote(images), nil
}

// output runs the tool and returns the text the model reads of its
// result, or, for an Image, *Image or []Image result, the images.
func (t *Tool) output(ctx context.Context, argsJSON string) (string, []Image, error) {
	v, err := t.call(ctx, argsJSON)
	if err != nil {
		return "", nil, err
	}
	switch r := v.(type) {
	case Image:
		return "", []Image{r}, nil
	case *Image:
		if r == nil {
			return "", nil, nil
		}
		return "", []Image{*r}, nil
	case []Image:
		return "", r, nil
	}
	if t.resultEnc != nil {
		if text, ok := t.resultEnc.text(v); ok {
			return text, nil, nil
		}
	}
	text, err := textOf(v, t.flatResult)
	return text, nil, err
}

// Run validates args, decodes them into the Go parameters, calls the Go
// function and returns its result.
func (t *Tool) Run(ctx context.Context, args map[string]any) (any, error) {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("tool %q: encode arguments: %w", t.name, err)
	}
	return t.call(ctx, string(b))
}

// call validates and invokes, turning a panic into a *PanicError.
func (t *Tool) call(ctx context.Context, args string) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, &PanicError{Tool: t.name, Value: r, Stack: debug.Stack()}
		}
	}()
	return t.invoke(ctx, args)
}

// textOf is the text the model reads for a tool's Go result: a string as
// it is, anything else as JSON; flat says that v cannot nest without
// bound.
func textOf(v any, flat bool) (string, error) {
	switch r := v.(type) {
	case nil:
		return "", nil
	case string:
		return r, nil
	case json.RawMessage:
		return string(r), nil
	case []byte:
		return string(r), nil
	}
	text, err := encodeResult(v, flat)
	if err != nil {
		return "", fmt.Errorf("encode result as JSON: %w", err)
	}
	return text, nil
}

// PanicError reports a tool that panicked. The agent recovers the panic and
// tells the model; nothing a tool does can crash the agent.
type PanicError struct {
	Tool  string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("tool %q panicked: %v", e.Tool, e.Value)
}

// ArgumentError reports arguments that do not fit a tool's parameters. Its
// text names every offending field, what was expected and what came, and
// lists the parameters, so that a model can correct itself in one turn.
type ArgumentError struct {
	Tool     string
	Problems []string
	Params   string
}

func (e *ArgumentError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid arguments for tool %q:", e.Tool)
	writeProblems(&b, e.Problems)
	if e.Params != "" {
		b.WriteString("\nparameters: ")
		b.WriteString(e.Params)
	}
	return b.String()
}

// writeProblems writes problems to b, each on a line of its own after
// "- ", as ArgumentError and AnswerError list them.
func writeProblems(b *strings.Builder, problems []string) {
	for _, p := range problems {
		b.WriteString("\n- ")
		b.WriteString(p)
	}
}

// ErrInvalidArguments matches every *ArgumentError with errors.Is.
var ErrInvalidArguments = errors.New("invalid arguments")

// Is makes errors.Is(err, ErrInvalidArguments) true.
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArguments }

// Toolset is the set of tools an agent exposes, by name.
type Toolset struct {
	tools  []*Tool
	byName map[string]*Tool
}

func newToolset(tools []*Tool) (*Toolset, error) {
	s := &Toolset{byName: make(map[string]*Tool, len(tools))}
	for _, t := range tools {
		if prev, ok := s.byName[t.name]; ok {
			if prev == t || prev.origin != nil && prev.origin == t.origin {
				return nil, fmt.Errorf("tool %q (%s) is passed twice; pass it once", t.name, t.source)
			}
			return nil, fmt.Errorf("two tools are named %q: %s and %s; rename one with onion.Name", t.name, prev.source, t.source)
		}
		s.byName[t.name] = t
		s.tools = append(s.tools, t)
	}
	return s, nil
}

// Get returns the tool called name.
func (s *Toolset) Get(name string) (*Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// Names returns the tools' names in the order the tools were given.
func (s *Toolset) Names() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.name
	}
	return names
}

// All returns the tools in the order they were given.
func (s *Toolset) All() []*Tool { return slices.Clone(s.tools) }

// Len returns the number of tools.
func (s *Toolset) Len() int { return len(s.tools) }

// ToolInfo describes one tool for people: its name, its Go-syntax signature
// and its description.
type ToolInfo struct {
	Name        string
	Signature   string
	Description string
}
