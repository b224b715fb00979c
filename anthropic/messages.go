package anthropic

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/onionkit/onion/loop"
)

// This file turns onion's messages into the Messages API's: the system
// messages at the start become the system prompt; a user message a list of
// blocks (its images, then its text); an assistant message its own content
// blocks as the API sent them (Items) or text and tool_use blocks; and
// consecutive tool messages one user message of tool_result blocks, in
// order. Every message is written the same way each time it is sent.

// wireMessage is one message of a request, its content blocks as JSON.
type wireMessage struct {
	role   string // "user" or "assistant"
	blocks [][]byte
}

// itemsFrom is the ItemsFrom of the messages this package writes Items to.
const itemsFrom = "anthropic"

// wireMessages converts msgs into the system prompt's blocks and the
// request's messages. A message with nothing to send (an empty text and
// no image, no call) is left out: the API refuses empty content. The API
// joins consecutive messages of one role, as when a note follows tool
// results.
func wireMessages(msgs []loop.Message) (system [][]byte, out []wireMessage, err error) {
	i := 0
	for ; i < len(msgs) && msgs[i].Role == loop.RoleSystem; i++ {
		if msgs[i].Content != "" {
			system = append(system, textBlock(msgs[i].Content))
		}
	}
	for ; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case loop.RoleSystem, loop.RoleUser:
			// A system message after the conversation began has no place
			// of its own in the Messages API: it is said as the user.
			blocks, err := userBlocks(m)
			if err != nil {
				return nil, nil, fmt.Errorf("message %d: %w", i, err)
			}
			if len(blocks) > 0 {
				out = append(out, wireMessage{role: "user", blocks: blocks})
			}
		case loop.RoleAssistant:
			blocks, err := assistantBlocks(m)
			if err != nil {
				return nil, nil, fmt.Errorf("message %d: %w", i, err)
			}
			if len(blocks) > 0 {
				out = append(out, wireMessage{role: "assistant", blocks: blocks})
			}
		case loop.RoleTool:
			var blocks [][]byte
			for ; i < len(msgs) && msgs[i].Role == loop.RoleTool; i++ {
				bl, err := toolResultBlock(msgs[i])
				if err != nil {
					return nil, nil, fmt.Errorf("message %d: %w", i, err)
				}
				blocks = append(blocks, bl)
			}
			i--
			out = append(out, wireMessage{role: "user", blocks: blocks})
		default:
			return nil, nil, fmt.Errorf("message %d: the role %q is not one the Messages API knows", i, m.Role)
		}
	}
	return system, out, nil
}

// userBlocks are a user message's images, then its text: Anthropic
// advises images first.
func userBlocks(m loop.Message) ([][]byte, error) {
	var blocks [][]byte
	for j, img := range m.Images {
		bl, err := imageBlock(img)
		if err != nil {
			return nil, fmt.Errorf("image %d: %w", j, err)
		}
		blocks = append(blocks, bl)
	}
	if m.Content != "" {
		blocks = append(blocks, textBlock(m.Content))
	}
	return blocks, nil
}

// assistantBlocks are an assistant message's content blocks: those the
// API sent, kept in Items, when there are any, else its text and its calls.
func assistantBlocks(m loop.Message) ([][]byte, error) {
	if m.ItemsFrom == itemsFrom && len(m.Items) > 0 {
		if blocks, ok := itemBlocks(m); ok {
			return blocks, nil
		}
	}
	var blocks [][]byte
	if m.Content != "" {
		blocks = append(blocks, textBlock(m.Content))
	}
	for _, c := range m.ToolCalls {
		blocks = append(blocks, toolUseBlock(wireID(c.ID), c.Name, c.Arguments))
	}
	return blocks, nil
}

// itemBlocks returns the blocks kept in m.Items, each byte for byte, but
// for a tool_use block whose ID the loop replaced (the tool_result answers
// the call by the new one) and one the loop dropped (a call made where no
// tools were offered has no result). ok is false when the Items do not
// hold the calls of m in order: the message is then written from its
// fields.
func itemBlocks(m loop.Message) (blocks [][]byte, ok bool) {
	var raws []json.RawMessage
	if json.Unmarshal(m.Items, &raws) != nil {
		return nil, false
	}
	call := 0
	for _, raw := range raws {
		var head struct {
			Type string `json:"type"`
			ID   string `json:"id"`
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &head) != nil || head.Type == "" {
			return nil, false // not blocks this package wrote
		}
		if head.Type != "tool_use" {
			blocks = append(blocks, raw)
			continue
		}
		if call >= len(m.ToolCalls) {
			continue // dropped by the loop
		}
		c := m.ToolCalls[call]
		call++
		if id := wireID(c.ID); id != head.ID {
			var block map[string]json.RawMessage
			if json.Unmarshal(raw, &block) != nil {
				return nil, false
			}
			block["id"] = json.RawMessage(appendString(nil, id))
			b, err := json.Marshal(block)
			if err != nil {
				return nil, false
			}
			raw = b
		}
		blocks = append(blocks, raw)
	}
	if call != len(m.ToolCalls) {
		return nil, false
	}
	return blocks, true
}

// toolResultBlock is a tool message as a tool_result block: its text as a
// string, or, with images, a list of its text and image blocks, marked
// is_error when the call failed.
func toolResultBlock(m loop.Message) ([]byte, error) {
	b := append([]byte(nil), `{"type":"tool_result","tool_use_id":`...)
	b = appendString(b, wireID(m.ToolCallID))
	if m.ToolError {
		b = append(b, `,"is_error":true`...)
	}
	switch {
	case len(m.Images) > 0:
		var content [][]byte
		if m.Content != "" {
			content = append(content, textBlock(m.Content))
		}
		for j, img := range m.Images {
			bl, err := imageBlock(img)
			if err != nil {
				return nil, fmt.Errorf("image %d: %w", j, err)
			}
			content = append(content, bl)
		}
		b = append(b, `,"content":`...)
		b = appendBlocks(b, content)
	case m.Content != "":
		b = append(b, `,"content":`...)
		b = appendString(b, m.Content)
	}
	return append(b, '}'), nil
}

func textBlock(text string) []byte {
	b := append([]byte(nil), `{"type":"text","text":`...)
	b = appendString(b, text)
	return append(b, '}')
}

// toolUseBlock is a call as a tool_use block. Its input must be a JSON
// object: arguments that are not one (cut short, or broken by the model)
// go as an empty object.
func toolUseBlock(id, name, args string) []byte {
	b := append([]byte(nil), `{"type":"tool_use","id":`...)
	b = appendString(b, id)
	b = append(b, `,"name":`...)
	b = appendString(b, name)
	b = append(b, `,"input":`...)
	b = append(b, inputObject(args)...)
	return append(b, '}')
}

// inputObject is args when it is a JSON object, else {}.
func inputObject(args string) []byte {
	a := bytes.TrimSpace([]byte(args))
	if len(a) > 0 && a[0] == '{' && json.Valid(a) {
		return a
	}
	return []byte("{}")
}

// The image types the Messages API takes.
var imageTypes = map[string]bool{"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true}

// imageBlock is an image block: a base64 source for bytes, a url source
// for a URL.
func imageBlock(img loop.Image) ([]byte, error) {
	b := append([]byte(nil), `{"type":"image","source":`...)
	switch {
	case len(img.Data) > 0:
		if !imageTypes[img.MIMEType] {
			return nil, fmt.Errorf("the Messages API takes image/jpeg, image/png, image/gif and image/webp, not %q", img.MIMEType)
		}
		b = append(b, `{"type":"base64","media_type":`...)
		b = appendString(b, img.MIMEType)
		b = append(b, `,"data":"`...)
		b = base64.StdEncoding.AppendEncode(b, img.Data)
		b = append(b, `"}`...)
	case img.URL != "":
		b = append(b, `{"type":"url","url":`...)
		b = appendString(b, img.URL)
		b = append(b, '}')
	default:
		return nil, fmt.Errorf("an image with neither bytes nor a URL")
	}
	return append(b, '}'), nil
}

// wireID is a call's ID as the Messages API takes it, letters, digits, _
// and -: the ID itself when it is one, else its other characters replaced
// by _ and a hash of it added, so that two IDs stay two.
func wireID(id string) string {
	ok := id != ""
	for i := 0; i < len(id) && ok; i++ {
		ok = idByte(id[i])
	}
	if ok {
		return id
	}
	b := make([]byte, 0, len(id)+17)
	for i := 0; i < len(id); i++ {
		if idByte(id[i]) {
			b = append(b, id[i])
		} else {
			b = append(b, '_')
		}
	}
	sum := sha256.Sum256([]byte(id))
	b = append(b, '_')
	return string(hex.AppendEncode(b, sum[:8]))
}

func idByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}
