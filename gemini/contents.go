package gemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/onionkit/onion/loop"
)

// This file builds a request: onion's conversation as Gemini contents,
// the agent's instructions as the system instruction, its tools as
// function declarations, a typed answer's Format as a response schema.
// A request is built from the messages alone, the same messages giving
// the same bytes, so that the requests of a run share their prefix and
// Gemini's implicit cache finds it: a model message the API wrote goes
// back as the parts it came in (Message.Items), thought signatures
// included, and any other message is rebuilt from its fields the same
// way every time.

// itemsFrom names this wire in Message.ItemsFrom.
const itemsFrom = "gemini"

// build is the request req, for model.
func (m *Model) build(model string, req *loop.Request) ([]*genai.Content, *genai.GenerateContentConfig, error) {
	cfg := &genai.GenerateContentConfig{
		Temperature:     req.Temperature,
		MaxOutputTokens: m.cfg.maxOutputTokens,
		// onion retries and continues runs itself: the SDK's automatic
		// continuation would send requests the loop does not count.
		AutomaticContinuation: genai.Ptr(false),
	}
	if m.cfg.thinkingBudget != nil || m.cfg.thinkingLevel != "" || m.cfg.includeThoughts {
		cfg.ThinkingConfig = &genai.ThinkingConfig{IncludeThoughts: m.cfg.includeThoughts,
			ThinkingBudget: m.cfg.thinkingBudget, ThinkingLevel: genai.ThinkingLevel(m.cfg.thinkingLevel)}
	}
	var system []*genai.Part
	for _, msg := range req.Messages {
		if msg.Role == loop.RoleSystem && msg.Content != "" {
			system = append(system, &genai.Part{Text: msg.Content})
		}
	}
	if len(req.Tools) > 0 {
		decls := make([]*genai.FunctionDeclaration, len(req.Tools))
		strict := false
		for i, d := range req.Tools {
			params, err := m.schemas.convert(d.Parameters, "parameters")
			if err != nil {
				return nil, nil, fmt.Errorf("tool %q: %w", d.Name, err)
			}
			decls[i] = &genai.FunctionDeclaration{Name: d.Name, Description: d.Description, ParametersJsonSchema: params}
			strict = strict || d.Strict
		}
		cfg.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
		if strict && validatedMode(m.name) {
			// Gemini's counterpart of OpenAI's strict mode (Gemini 2.5 and
			// later): calls that fit their schema.
			cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
				Mode: genai.FunctionCallingConfigModeValidated}}
		}
	}
	if f := req.Format; f != nil {
		schema, err := m.schemas.convert(f.Schema, "format")
		if err != nil {
			return nil, nil, fmt.Errorf("answer format %q: %w", f.Name, err)
		}
		if len(req.Tools) == 0 || m.jsonWithTools() {
			cfg.ResponseMIMEType, cfg.ResponseJsonSchema = "application/json", schema
		}
		if len(req.Tools) > 0 && !m.jsonWithTools() {
			// Before Gemini 3 a request with functions cannot ask for
			// JSON: the model is told the shape instead, the same way in
			// every request of the run.
			b, _ := json.Marshal(f.Schema)
			note := "Your final answer, once you need no more tools, is only a JSON value that fits this JSON Schema"
			if f.Description != "" {
				note += " (" + f.Description + ")"
			}
			system = append(system, &genai.Part{Text: note + ": " + string(b)})
		}
	}
	if len(system) > 0 {
		cfg.SystemInstruction = &genai.Content{Role: genai.RoleUser, Parts: system}
	}
	contents, err := m.contents(req.Messages)
	if err != nil {
		return nil, nil, err
	}
	return contents, cfg, nil
}

// jsonWithTools reports whether the model takes a response schema in a
// request with functions: Gemini 3 does, earlier models refuse it.
func (m *Model) jsonWithTools() bool { return !oldModel(m.name) }

// imagesInside reports whether a tool's images go in its function
// response's parts (Gemini 3) rather than after the function responses.
func (m *Model) imagesInside() bool {
	if m.cfg.imagesInside != nil {
		return *m.cfg.imagesInside
	}
	return !oldModel(m.name)
}

// oldModel reports whether name is a model from before Gemini 3.
func oldModel(name string) bool {
	name = strings.TrimPrefix(name, "models/")
	return strings.HasPrefix(name, "gemini-1") || strings.HasPrefix(name, "gemini-2")
}

// validatedMode reports whether the model takes the VALIDATED function
// calling mode: Gemini 2.5 and later do.
func validatedMode(name string) bool {
	name = strings.TrimPrefix(name, "models/")
	return !strings.HasPrefix(name, "gemini-1") && !strings.HasPrefix(name, "gemini-2.0")
}

// sentCall is a function call as a model content sent it: a function
// response answers it by its ID when it has one, else by name and order.
type sentCall struct{ id, name string }

// contents is the conversation msgs, system messages left out, as
// Gemini contents: user messages and tool results as user contents (the
// results of one turn together, in the order of the calls), assistant
// messages as model contents.
func (m *Model) contents(msgs []loop.Message) ([]*genai.Content, error) {
	var out []*genai.Content
	var calls []sentCall     // the function calls of the last model content
	byID := map[string]int{} // their index by the ToolCallID answering them
	for i := 0; i < len(msgs); i++ {
		msg := msgs[i]
		switch msg.Role {
		case loop.RoleSystem:
		case loop.RoleUser:
			parts, err := userParts(msg)
			if err != nil {
				return nil, fmt.Errorf("message %d: %w", i, err)
			}
			if len(parts) > 0 {
				out = append(out, &genai.Content{Role: genai.RoleUser, Parts: parts})
			}
		case loop.RoleAssistant:
			c, sent := modelContent(msg)
			calls, byID = sent, make(map[string]int, len(sent))
			for j, tc := range msg.ToolCalls {
				if j < len(sent) {
					byID[tc.ID] = j
				}
			}
			if c != nil {
				out = append(out, c)
			}
		case loop.RoleTool:
			j := i
			for j < len(msgs) && msgs[j].Role == loop.RoleTool {
				j++
			}
			c, err := m.toolContent(msgs[i:j], calls, byID, i)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
			i = j - 1
		default:
			return nil, fmt.Errorf("message %d: role %q", i, bound(string(msg.Role)))
		}
	}
	return out, nil
}

// userParts are a user message's text and images.
func userParts(msg loop.Message) ([]*genai.Part, error) {
	var parts []*genai.Part
	if msg.Content != "" {
		parts = append(parts, &genai.Part{Text: msg.Content})
	}
	for k, img := range msg.Images {
		p, err := imagePart(img)
		if err != nil {
			return nil, fmt.Errorf("image %d: %w", k, err)
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// modelContent is an assistant message as a model content, and the
// function calls it sends, in order: the parts the API wrote when the
// message holds them (Items from this wire, which agree with its tool
// calls), else parts rebuilt from its text and tool calls. nil when the
// message has nothing to send.
func modelContent(msg loop.Message) (*genai.Content, []sentCall) {
	if parts, ok := ownParts(msg); ok {
		var sent []sentCall
		for _, p := range parts {
			if p.FunctionCall != nil {
				sent = append(sent, sentCall{id: p.FunctionCall.ID, name: p.FunctionCall.Name})
			}
		}
		if len(parts) == 0 {
			return nil, nil
		}
		return &genai.Content{Role: genai.RoleModel, Parts: parts}, sent
	}
	var parts []*genai.Part
	if msg.Content != "" {
		parts = append(parts, &genai.Part{Text: msg.Content})
	}
	sent := make([]sentCall, 0, len(msg.ToolCalls))
	for _, tc := range msg.ToolCalls {
		// The call's ID goes with it, the loop's own when the model gave
		// none: the API matches the response by it.
		parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: tc.ID, Name: tc.Name, Args: args(tc.Arguments)}})
		sent = append(sent, sentCall{id: tc.ID, name: tc.Name})
	}
	if len(parts) == 0 {
		return nil, nil
	}
	return &genai.Content{Role: genai.RoleModel, Parts: parts}, sent
}

// ownParts are the parts of msg's Items when this wire wrote them and
// they agree with its tool calls: the same calls, by name, in the same
// order. A message whose calls the loop dropped (a final answer after
// the cap) keeps its other parts.
func ownParts(msg loop.Message) ([]*genai.Part, bool) {
	if msg.ItemsFrom != itemsFrom || len(msg.Items) == 0 {
		return nil, false
	}
	var parts []*genai.Part
	if err := json.Unmarshal(msg.Items, &parts); err != nil {
		return nil, false
	}
	kept := parts[:0]
	n := 0
	for _, p := range parts {
		if p == nil {
			continue
		}
		if p.FunctionCall != nil {
			if len(msg.ToolCalls) == 0 {
				continue
			}
			if n >= len(msg.ToolCalls) || msg.ToolCalls[n].Name != p.FunctionCall.Name {
				return nil, false
			}
			n++
		}
		kept = append(kept, p)
	}
	if n != len(msg.ToolCalls) {
		return nil, false
	}
	return kept, true
}

// args is a call's arguments as the object genai sends: an object when
// the text is one, else the text under "arguments" (a model's malformed
// arguments, sent back as they came).
func args(text string) map[string]any {
	var m map[string]any
	if strings.TrimSpace(text) == "" {
		return map[string]any{}
	}
	if err := json.Unmarshal([]byte(text), &m); err != nil || m == nil {
		return map[string]any{"arguments": text}
	}
	return m
}

// toolContent is the results of one turn's calls, tools (starting at
// message first), as one user content: a function response each, in the
// order of calls, answering its call by the call's ID when it was sent
// with one. A tool's images go in its response's parts, or after the
// responses, as the model takes them.
func (m *Model) toolContent(tools []loop.Message, calls []sentCall, byID map[string]int, first int) (*genai.Content, error) {
	order := make([]int, 0, len(tools)) // indices into tools, in the order of calls
	placed := make([]bool, len(calls))
	slots := make([]int, len(calls))
	for i := range slots {
		slots[i] = -1
	}
	var unmatched []int
	for k, t := range tools {
		if j, ok := byID[t.ToolCallID]; ok && !placed[j] {
			placed[j], slots[j] = true, k
			continue
		}
		unmatched = append(unmatched, k)
	}
	for _, k := range slots {
		if k >= 0 {
			order = append(order, k)
		}
	}
	order = append(order, unmatched...)

	inside := m.imagesInside()
	var parts, after []*genai.Part
	for _, k := range order {
		t := tools[k]
		key := "output"
		if t.ToolError {
			key = "error" // as the API documents a failed call's response
		}
		fr := &genai.FunctionResponse{Name: t.Name, Response: map[string]any{key: t.Content}}
		if j, ok := byID[t.ToolCallID]; ok {
			fr.ID, fr.Name = calls[j].id, calls[j].name
		} else {
			fr.ID = t.ToolCallID
		}
		for n, img := range t.Images {
			where := fmt.Sprintf("message %d: image %d", first+k, n)
			if inside {
				p, name, err := imageResponsePart(img, len(fr.Parts)+1)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", where, err)
				}
				fr.Parts = append(fr.Parts, p)
				refs, _ := fr.Response["images"].([]any)
				fr.Response["images"] = append(refs, map[string]any{"$ref": name})
				continue
			}
			p, err := imagePart(img)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", where, err)
			}
			if n == 0 {
				after = append(after, &genai.Part{Text: "Images returned by the tool " + fr.Name + ":"})
			}
			after = append(after, p)
		}
		parts = append(parts, &genai.Part{FunctionResponse: fr})
	}
	return &genai.Content{Role: genai.RoleUser, Parts: append(parts, after...)}, nil
}
