package gemini_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/gemini"
	"github.com/onionkit/onion/oniontest"
)

// The conformance cases of images, cut replies, errors, schemas, names
// and the stable prefix (the table is in conformance_test.go).

var png = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00\x90wS\xde")

func imageInPrompt(t *testing.T, p provider) {
	s := oniontest.NewServer(t, oniontest.Text("A red square and a cat."))
	a := agent(t, p.open(t, s, p.newer))
	c := a.NewConversation()
	c.SetHistory([]onion.Message{
		{Role: onion.RoleUser, Content: "Look at these.", Images: []onion.Image{
			{Data: png}, // the type is sniffed
			{URL: "https://example.com/cat.jpg"},
		}},
		{Role: onion.RoleAssistant, Content: "I see them."},
	})
	if _, err := c.Run(context.Background(), "What are they?"); err != nil {
		t.Fatal(err)
	}
	parts := s.Requests()[0].Gemini.Contents[0].Parts
	if len(parts) != 3 || parts[1].InlineData == nil || parts[1].InlineData.MIMEType != "image/png" ||
		parts[1].InlineData.Data != base64.StdEncoding.EncodeToString(png) ||
		parts[2].FileData == nil || parts[2].FileData.FileURI != "https://example.com/cat.jpg" || parts[2].FileData.MIMEType != "image/jpeg" {
		t.Errorf("the prompt's parts: %s", s.Requests()[0].Raw)
	}

	// A URL the API cannot fetch is refused before any request.
	c.SetHistory([]onion.Message{{Role: onion.RoleUser, Content: "x", Images: []onion.Image{{URL: "file:///etc/passwd", MIMEType: "image/png"}}},
		{Role: onion.RoleAssistant, Content: "y"}})
	_, err := c.Run(context.Background(), "z")
	if err == nil || !strings.Contains(err.Error(), "https and gs:// URLs") || len(s.Requests()) != 1 {
		t.Errorf("a file URL: %v", err)
	}
}

func imageFromTool(t *testing.T, p provider) {
	history := []onion.Message{
		{Role: onion.RoleUser, Content: "Take a screenshot."},
		{Role: onion.RoleAssistant, ToolCalls: []onion.ToolRequest{{ID: "call_1", Name: "screenshot", Arguments: "{}"}}},
		{Role: onion.RoleTool, ToolCallID: "call_1", Name: "screenshot", Content: "the screen", Images: []onion.Image{{MIMEType: "image/png", Data: png}}},
		{Role: onion.RoleAssistant, Content: "I see a red square."},
	}
	for _, model := range []string{p.newer, p.older} {
		t.Run(model, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Text("It was red."))
			c := agent(t, p.open(t, s, model)).NewConversation()
			c.SetHistory(history)
			if _, err := c.Run(context.Background(), "What color was it?"); err != nil {
				t.Fatal(err)
			}
			parts := s.Requests()[0].Gemini.Contents[2].Parts
			data := base64.StdEncoding.EncodeToString(png)
			if model == p.newer {
				// Gemini 3: inside the function response, referred to by name.
				fr := parts[0].FunctionResponse
				if len(parts) != 1 || fr == nil || len(fr.Parts) != 1 || !strings.Contains(string(fr.Parts[0]), `"data":"`+data+`"`) ||
					!strings.Contains(string(fr.Parts[0]), `"displayName":"image_1.png"`) ||
					string(fr.Response) != `{"images":[{"$ref":"image_1.png"}],"output":"the screen"}` {
					t.Errorf("the tool's image: %s", s.Requests()[0].Raw)
				}
				return
			}
			// Earlier models: after the function responses, in the same content.
			if len(parts) != 3 || parts[0].FunctionResponse == nil || parts[1].Text == "" || parts[2].InlineData == nil || parts[2].InlineData.Data != data {
				t.Errorf("the tool's image: %s", s.Requests()[0].Raw)
			}
		})
	}
}

func cutReply(t *testing.T, p provider) {
	s := oniontest.NewServer(t, oniontest.Text("The capital of France is").Truncated())
	a := agent(t, p.open(t, s, p.older, gemini.MaxOutputTokens(5)))
	res, err := a.Run(context.Background(), "What is the capital of France?")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != onion.StopLength || res.Output != "The capital of France is" {
		t.Errorf("stop %s, output %q", res.StopReason, res.Output)
	}
	if g := decode(t, s.Requests()[0]).GenerationConfig; string(g["maxOutputTokens"]) != "5" {
		t.Errorf("generation config %v", g)
	}
}

func retriedOverload(t *testing.T, p provider) {
	exhausted := `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED",` +
		`"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"0.02s"}]}}`
	s := oniontest.NewServer(t,
		oniontest.Error(429, exhausted),
		oniontest.StreamError("UNAVAILABLE", "The model is overloaded. Please try again later."),
		oniontest.Text("at last"),
	)
	a := agent(t, p.open(t, s, p.older))
	for _, stream := range []bool{false, true} {
		if stream {
			s.Add(oniontest.Error(429, exhausted), oniontest.StreamError("UNAVAILABLE", "The model is overloaded."), oniontest.Text("at last"))
			var out string
			for e, err := range a.Stream(context.Background(), "go") {
				if err != nil {
					t.Fatal(err)
				}
				if e.Kind == onion.EventDone {
					out = e.Result.Output
				}
			}
			if out != "at last" {
				t.Errorf("streamed %q", out)
			}
			continue
		}
		res, err := a.Run(context.Background(), "go")
		if err != nil || res.Output != "at last" || res.Usage.Requests != 1 {
			t.Fatalf("result %+v, %v", res, err)
		}
	}
	if n := len(s.Requests()); n != 6 {
		t.Errorf("%d requests, want 6", n)
	}

	// An invalid request is not sent again; the error names the API and
	// the URL, never the key.
	s = oniontest.NewServer(t, oniontest.Error(400, `{"error":{"code":400,"message":"API key not valid: `+testKey+`","status":"INVALID_ARGUMENT"}}`))
	_, err := agent(t, p.open(t, s, p.older)).Run(context.Background(), "go")
	var me *onion.ModelError
	if !errors.As(err, &me) || me.StatusCode != 400 || me.Retryable || len(s.Requests()) != 1 {
		t.Fatalf("error %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, testKey) || !strings.Contains(msg, "gemini: POST "+s.GeminiURL()+"/v1beta/models/gemini-2.5-flash:generateContent: 400 INVALID_ARGUMENT") {
		t.Errorf("error %q", msg)
	}
}

func schemaRefused(t *testing.T, p provider) {
	s := oniontest.NewServer(t)
	tool, err := onion.NewRawTool("either", json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"allOf":[{"required":["a"]},{"required":["b"]}]}`),
		func(context.Context, json.RawMessage) (any, error) { return "ok", nil })
	if err != nil {
		t.Fatal(err)
	}
	_, err = onion.NewAgent("refused", tool, onion.WithModel(p.open(t, s, p.newer)))
	var se *gemini.SchemaError
	if !errors.As(err, &se) || se.Keyword != "allOf" || !strings.Contains(err.Error(), `tool "either"`) || !strings.Contains(err.Error(), `keyword "allOf"`) {
		t.Errorf("NewAgent: %v", err)
	}
	// What only narrows the arguments is told in the description.
	tool, _ = onion.NewRawTool("code", json.RawMessage(`{"type":"object","properties":{"c":{"type":"string","pattern":"^[A-Z]{3}$","minLength":3}},"required":["c"]}`),
		func(context.Context, json.RawMessage) (any, error) { return "ok", nil })
	s = oniontest.NewServer(t, oniontest.Text("ok"))
	if _, err := agent(t, p.open(t, s, p.newer), tool).Run(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	if raw := string(decode(t, s.Requests()[0]).Tools); strings.Contains(raw, "pattern") ||
		!strings.Contains(raw, `"description":"matching the regular expression ^[A-Z]{3}$; at least 3 characters"`) {
		t.Errorf("tools %s", raw)
	}
}

func modelByName(t *testing.T, p provider) {
	s := oniontest.NewServer(t, oniontest.Text("by name"))
	t.Setenv("GEMINI_BASE_URL", s.GeminiURL())
	t.Setenv("GEMINI_API_KEY", testKey)
	a, err := onion.NewAgent("named", onion.Model(p.name+"/"+p.older))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := a.Input(context.Background(), "hi"); err != nil || out != "by name" {
		t.Fatalf("%q, %v", out, err)
	}
	if r := s.Requests()[0]; r.Gemini.Model != p.older || r.Header.Get("X-Goog-Api-Key") != testKey {
		t.Errorf("request for %q with key %q", r.Gemini.Model, r.Header.Get("X-Goog-Api-Key"))
	}

	// No key and no base URL: the first request says what to set.
	t.Setenv("GEMINI_BASE_URL", "")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	a, err = onion.NewAgent("keyless", onion.Model(p.name+"/"+p.older))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Input(context.Background(), "hi"); !errors.Is(err, gemini.ErrNoAPIKey) || !strings.Contains(err.Error(), "set GEMINI_API_KEY") {
		t.Errorf("without a key: %v", err)
	}
}

// stablePrefix: the requests of a run keep the system instruction and
// the tools byte for byte, and each request's contents are the previous
// request's, byte for byte, with the new turn after them.
func stablePrefix(t *testing.T, p provider) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			s := oniontest.NewServer(t)
			for i := range 4 {
				s.Add(oniontest.ToolCalls(oniontest.Call("weather", fmt.Sprintf(`{"city":"city %d"}`, i)), oniontest.Call("lookup", `{"key":"k"}`)))
			}
			s.Add(oniontest.Text("done"))
			a := agent(t, p.open(t, s, p.newer, gemini.IncludeThoughts()), Weather, Lookup, onion.SystemPrompt("Be thorough."))
			if stream {
				for _, err := range a.Stream(context.Background(), "go") {
					if err != nil {
						t.Fatal(err)
					}
				}
			} else if _, err := a.Run(context.Background(), "go"); err != nil {
				t.Fatal(err)
			}
			reqs := s.Requests()
			for n := 0; n+1 < len(reqs); n++ {
				a, b := prompt(t, reqs[n]), prompt(t, reqs[n+1])
				if !bytes.Equal(a.system, b.system) || !bytes.Equal(a.tools, b.tools) {
					t.Errorf("request %d: the system instruction or the tools changed", n+2)
				}
				prefix := bytes.TrimSuffix(a.contents, []byte("]"))
				if !bytes.HasPrefix(b.contents, prefix) || len(b.contents) <= len(a.contents) {
					t.Errorf("request %d does not continue request %d:\n%s\n%s", n+2, n+1, a.contents, b.contents)
				}
			}
		})
	}
}

type sent struct{ system, tools, contents json.RawMessage }

func prompt(t *testing.T, r oniontest.Request) sent {
	t.Helper()
	var p struct {
		System   json.RawMessage `json:"systemInstruction"`
		Tools    json.RawMessage `json:"tools"`
		Contents json.RawMessage `json:"contents"`
	}
	if err := json.Unmarshal(r.Raw, &p); err != nil {
		t.Fatal(err)
	}
	return sent{p.System, p.Tools, p.Contents}
}
