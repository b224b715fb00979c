package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"reflect"
	"testing"

	goopenai "github.com/sashabaranov/go-openai"

	"golang.org/x/sync/errgroup"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// TestToolsEncodedOncePerModel runs a tool loop of two requests ten
// times, four at once, on one Model of each wire: the tools array is
// encoded once, by the first request, and every request carries the same
// bytes.
func TestToolsEncodedOncePerModel(t *testing.T) {
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			const runs = 10
			s := oniontest.NewServer(t)
			reply := oniontest.Func(func(r oniontest.Request) oniontest.Step {
				if len(r.ToolResults()) > 0 {
					return oniontest.Text("done")
				}
				return oniontest.ToolCalls(oniontest.Call("lookup", `{"key":"a"}`), oniontest.Call("count", `{}`))
			})
			for range 2 * runs {
				s.Add(reply)
			}
			before := toolsEncoded.Load()
			m := newModel(t, s, w.opts...)
			var g errgroup.Group
			g.SetLimit(4)
			for range runs {
				g.Go(func() error {
					_, err := drive(context.Background(), m, testTools, nil, userMessage("look up a"))
					return err
				})
			}
			if err := g.Wait(); err != nil {
				t.Fatal(err)
			}
			if n := toolsEncoded.Load() - before; n != 1 {
				t.Errorf("the tools array was encoded %d times for %d requests, want once", n, 2*runs)
			}
			reqs := s.Requests()
			if len(reqs) != 2*runs {
				t.Fatalf("%d requests, want %d", len(reqs), 2*runs)
			}
			var first json.RawMessage
			for i, r := range reqs {
				var body struct {
					Tools json.RawMessage `json:"tools"`
				}
				if err := json.Unmarshal(r.Raw, &body); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					first = body.Tools
					continue
				}
				if string(body.Tools) != string(first) {
					t.Fatalf("request %d's tools differ from the first's:\n%s\n%s", i+1, body.Tools, first)
				}
			}
			var tools []map[string]any
			if err := json.Unmarshal(first, &tools); err != nil || len(tools) != 2 {
				t.Fatalf("tools %s: %v", first, err)
			}
		})
	}
}

// TestBodiesMeanWhatGoOpenAIsDo checks the bodies written by hand against
// go-openai's encoding of the same request, which a client that does not
// splice still sends: decoded, they must be the same JSON values.
func TestBodiesMeanWhatGoOpenAIsDo(t *testing.T) {
	temp := float32(0.5)
	defs := []loop.ToolDef{
		{Name: "lookup", Description: "Looks <a> & <b> up.", Parameters: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}}}`)},
		{Name: "strict_one", Parameters: json.RawMessage(`{"type":"object"}`), Strict: true},
	}
	items := `[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e<>"},{"type":"function_call","id":"fc_1","call_id":"c1","name":"lookup","arguments":"{\"key\":\"a&b\"}"}]`
	format := &loop.Format{Name: "answer", Description: "An <answer> & more.", Schema: json.RawMessage(`{"type":"object","description":"<n>"}`)}
	req := &loop.Request{Model: "m", Temperature: &temp, Tools: defs, Format: format, Messages: []loop.Message{
		{Role: loop.RoleSystem, Content: "Be <brief>."},
		{Role: loop.RoleUser, Content: "Look up a & b, \"quoted\", \u2028 and \x01.", Images: []loop.Image{{MIMEType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n<>")}, {URL: "https://example.com/a.png?x=<1>&y=\"2\""}}},
		{Role: loop.RoleAssistant, Content: "Looking.", Reasoning: "hmm", ToolCalls: []loop.ToolRequest{{ID: "c1", Name: "lookup", Arguments: `{"key":"a&b"}`}, {ID: "c2", Name: "strict_one", Arguments: `{}`}}},
		{Role: loop.RoleTool, ToolCallID: "c1", Name: "lookup", Content: "<record a>"},
		{Role: loop.RoleTool, ToolCallID: "c2", Name: "strict_one", Content: "ok", Images: []loop.Image{{Data: []byte("GIF89a")}}},
		{Role: loop.RoleAssistant, Content: "", ToolCalls: []loop.ToolRequest{{ID: "c1", Name: "lookup", Arguments: `{"key":"a&b"}`}}, Items: json.RawMessage(items), ResponseID: "resp_1"},
		{Role: loop.RoleTool, ToolCallID: "c1", Name: "lookup", Content: "again"},
		{Role: loop.RoleUser, Content: "Thanks."},
	}}
	same := func(t *testing.T, got net.Buffers, want any) {
		t.Helper()
		var g, w any
		var raw []byte
		for _, p := range got {
			raw = append(raw, p...)
		}
		if err := json.Unmarshal(raw, &g); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		wb, err := json.Marshal(want)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(wb, &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("the body differs from go-openai's:\ngot  %s\nwant %s", raw, wb)
		}
	}
	t.Run("chat", func(t *testing.T) {
		m := &chatModel{tools: toolsCache{encode: chatTools}}
		for _, stream := range []bool{false, true} {
			body, err := m.chatBody(req, stream)
			if err != nil {
				t.Fatal(err)
			}
			want := chatRequest(req)
			if stream {
				want.Stream, want.StreamOptions = true, &goopenai.StreamOptions{IncludeUsage: true}
			}
			same(t, body, want)
		}
	})
	for _, chain := range []bool{false, true} {
		t.Run(fmt.Sprintf("responses/chain=%v", chain), func(t *testing.T) {
			m := &responsesModel{chain: chain, tools: toolsCache{encode: responsesTools}}
			for _, stream := range []bool{false, true} {
				body, err := m.responsesBody(req, !chain, stream)
				if err != nil {
					t.Fatal(err)
				}
				want := responsesRequest(req, chain)
				want.Stream = stream
				same(t, body, want)
			}
			body, err := m.responsesBody(req, false, false)
			if err != nil {
				t.Fatal(err)
			}
			want := responsesRequest(req, chain)
			want.Include = nil
			same(t, body, want)
		})
	}
}

// TestBodiesAreGoOpenAIsBytes: with nothing to escape, the bodies written
// by hand are go-openai's, byte for byte, on both wires.
func TestBodiesAreGoOpenAIsBytes(t *testing.T) {
	temp := float32(0.25)
	req := &loop.Request{Model: "m", Temperature: &temp,
		Tools:  []loop.ToolDef{{Name: "lookup", Description: "Looks up.", Parameters: json.RawMessage(`{"type":"object"}`), Strict: true}},
		Format: &loop.Format{Name: "answer", Description: "The answer.", Schema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`), Strict: true},
		Messages: []loop.Message{
			{Role: loop.RoleSystem, Content: "Be brief."},
			{Role: loop.RoleUser, Content: "Look up a."},
			{Role: loop.RoleAssistant, ToolCalls: []loop.ToolRequest{{ID: "c1", Name: "lookup", Arguments: `{"key":"a"}`}}},
			{Role: loop.RoleTool, ToolCallID: "c1", Name: "lookup", Content: "record a", Images: []loop.Image{{URL: "https://example.com/a.png"}}},
			{Role: loop.RoleUser, Content: "And this?", Images: []loop.Image{{MIMEType: "image/jpeg", Data: []byte{0xff, 0xd8, 0xff}}}},
		}}
	join := func(b net.Buffers) string {
		var s []byte
		for _, p := range b {
			s = append(s, p...)
		}
		return string(s)
	}
	chat := &chatModel{tools: toolsCache{encode: chatTools}}
	body, err := chat.chatBody(req, false)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(chatRequest(req))
	if got := join(body); got != string(want) {
		t.Errorf("chat:\ngot  %s\nwant %s", got, want)
	}
	resp := &responsesModel{tools: toolsCache{encode: responsesTools}}
	body, err = resp.responsesBody(req, true, false)
	if err != nil {
		t.Fatal(err)
	}
	want, _ = json.Marshal(responsesRequest(req, false))
	if got := join(body); got != string(want) {
		t.Errorf("responses:\ngot  %s\nwant %s", got, want)
	}
}

// FuzzBodies holds the bodies written by hand to go-openai's meaning for
// any text in the messages, the model's and the tools' included, and any
// image URL or bytes: valid JSON, and the same values once decoded,
// invalid UTF-8 and all.
func FuzzBodies(f *testing.F) {
	f.Add("Look <up> a & b", `{"key":"a"}`, "<record>", "call_1")
	f.Add("\u2028\u2029\x00\x1f\"\\", "not json", "\xff\xfe", "")
	f.Add("", "", "", "c")
	f.Fuzz(func(t *testing.T, prompt, args, result, id string) {
		req := &loop.Request{Model: "m", Tools: []loop.ToolDef{{Name: "t", Description: prompt, Parameters: json.RawMessage(`{"type":"object"}`)}},
			Messages: []loop.Message{
				{Role: loop.RoleSystem, Content: prompt},
				{Role: loop.RoleUser, Content: prompt, Images: []loop.Image{{URL: "https://example.com/" + prompt}}},
				{Role: loop.RoleAssistant, Content: result, Reasoning: prompt, ToolCalls: []loop.ToolRequest{{ID: id, Name: "t", Arguments: args}}},
				{Role: loop.RoleTool, ToolCallID: id, Name: "t", Content: result, Images: []loop.Image{{MIMEType: "image/png", Data: []byte(result)}}},
			}}
		if result == "" {
			req.Messages[3].Images = nil // an image needs bytes or a URL (checkImages)
		}
		decode := func(b []byte) any {
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatalf("%q: %v", b, err)
			}
			return v
		}
		join := func(b net.Buffers) []byte {
			var s []byte
			for _, p := range b {
				s = append(s, p...)
			}
			return s
		}
		chat := &chatModel{tools: toolsCache{encode: chatTools}}
		body, err := chat.chatBody(req, true)
		if err != nil {
			t.Fatal(err)
		}
		creq := chatRequest(req)
		creq.Stream, creq.StreamOptions = true, &goopenai.StreamOptions{IncludeUsage: true}
		want, err := json.Marshal(creq)
		if err != nil {
			t.Fatal(err)
		}
		if got := join(body); !reflect.DeepEqual(decode(got), decode(want)) {
			t.Errorf("chat:\ngot  %q\nwant %q", got, want)
		}
		resp := &responsesModel{tools: toolsCache{encode: responsesTools}}
		body, err = resp.responsesBody(req, true, false)
		if err != nil {
			t.Fatal(err)
		}
		if want, err = json.Marshal(responsesRequest(req, false)); err != nil {
			t.Fatal(err)
		}
		if got := join(body); !reflect.DeepEqual(decode(got), decode(want)) {
			t.Errorf("responses:\ngot  %q\nwant %q", got, want)
		}
	})
}
