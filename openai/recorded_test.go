package openai

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// recorded reads testdata/pydantic-ai/<name>, decoded.
func recorded(t *testing.T, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "pydantic-ai", name))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return v
}

// within reports whether every field of want that is not null is in got
// with the same value, recursively; arrays must be as long.
func within(want, got any) bool {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			if wv != nil && !within(wv, g[k]) {
				return false
			}
		}
		return true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !within(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, got)
}

// sent decodes the body of a request the server received.
func sent(t *testing.T, r oniontest.Request) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Raw, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRecordedToolImageOnChatCompletions replays a run OpenAI answered
// (gpt-5-mini, recorded by pydantic-ai): a tool returns an image URL, and
// the client shows it in a user message after the tool message, which
// OpenAI accepted and described. The client's second request carries the
// recorded messages, field for field, but for the caption naming the call
// (onion's words); the recorded replies become the answer and its usage.
func TestRecordedToolImageOnChatCompletions(t *testing.T) {
	dir := filepath.Join("testdata", "pydantic-ai")
	s := oniontest.NewServer(t,
		oniontest.ReplayFile(t, filepath.Join(dir, "chat_tool_image_url.1.response.json")),
		oniontest.ReplayFile(t, filepath.Join(dir, "chat_tool_image_url.2.response.json")))
	m := newModel(t, s)
	getFile := loop.ToolDef{Name: "get_file", Parameters: json.RawMessage(`{"additionalProperties":false,"properties":{},"type":"object"}`)}
	const imageURL = "https://www.gstatic.com/webp/gallery3/1.png"
	result := func(loop.ToolRequest) loop.Message {
		return loop.Message{Content: "See file 6a18c6.", Images: []loop.Image{{URL: imageURL}}}
	}
	var last *loop.Response
	msgs := []loop.Message{userMessage("Use the get_file tool now to retrieve a image file, then describe what you received.")}
	for range 2 {
		resp, err := m.Generate(context.Background(), &loop.Request{Model: "gpt-5-mini", Messages: msgs, Tools: []loop.ToolDef{getFile}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		last = resp
		msgs = append(msgs, resp.Message)
		for _, c := range resp.Message.ToolCalls {
			out := result(c)
			out.Role, out.ToolCallID, out.Name = loop.RoleTool, c.ID, c.Name
			msgs = append(msgs, out)
		}
	}
	reqs := s.Requests()
	want := recorded(t, "chat_tool_image_url.2.request.json").(map[string]any)["messages"].([]any)
	// The caption is onion's: it names the call the image came from.
	want[3].(map[string]any)["content"].([]any)[0].(map[string]any)["text"] = "The tool call call_qLQ1cE6MlqfhbxeGig6LIw9D (get_file) returned this image:"
	if got := sent(t, reqs[1])["messages"]; !within(want, got) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("second request's messages\n got %s\nwant %s", g, w)
	}
	reply := recorded(t, "chat_tool_image_url.2.response.json").(map[string]any)
	text := reply["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]
	if last.Message.Content != text || last.Usage.PromptTokens != 334 || last.Usage.ReasoningTokens != 256 || last.FinishReason != "stop" {
		t.Errorf("answer %q, usage %+v, finish %q", last.Message.Content, last.Usage, last.FinishReason)
	}
}

// TestRecordedPromptImageOnTheResponsesAPI replays a request OpenAI
// answered (gpt-4o, recorded by pydantic-ai): a prompt of text and an
// image URL goes as the recorded input_text and input_image (detail auto),
// value for value, and the recorded reply becomes the answer.
func TestRecordedPromptImageOnTheResponsesAPI(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.ReplayFile(t, filepath.Join("testdata", "pydantic-ai", "responses_prompt_image_url.1.response.json")))
	m := newModel(t, s, ResponsesAPI())
	prompt := loop.Message{Role: loop.RoleUser, Content: "hello",
		Images: []loop.Image{{URL: "https://t3.ftcdn.net/jpg/00/85/79/92/360_F_85799278_0BBGV9OAdQDTLnKwAPBCcg1J7QtiieJY.jpg"}}}
	resp, err := m.Generate(context.Background(), &loop.Request{Model: "gpt-4o", Messages: []loop.Message{prompt}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := recorded(t, "responses_prompt_image_url.1.request.json").(map[string]any)["input"]
	if got := sent(t, s.Requests()[0])["input"]; !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		t.Errorf("input\n got %s\nwant %s", g, w)
	}
	if resp.Message.Content != "Hello! I see you've shared an image of a potato. How can I assist you today?" || resp.Usage.PromptTokens != 663 {
		t.Errorf("answer %q, usage %+v", resp.Message.Content, resp.Usage)
	}
}
