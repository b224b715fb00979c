package gemini_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/gemini"
	"github.com/onionkit/onion/loop"
)

// These tests replay exchanges recorded against the live Gemini API
// (testdata/recorded, see its README): onion builds the same request from
// the same conversation, and what it sent is set beside what was
// recorded, field for field (see normal for the differences between
// clients that do not count); the reply recorded, served byte for byte,
// is read into onion's message, usage and finish reason.

// recordedModel is a Model of name on c.
func recordedModel(t *testing.T, c *cassette, name string, opts ...gemini.Option) *gemini.Model {
	t.Helper()
	m, err := gemini.New(name, append([]gemini.Option{gemini.BaseURL(c.URL), gemini.APIKey(testKey)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// sameRequest fails the test when request n of c differs from the one
// recorded.
func sameRequest(t *testing.T, c *cassette, n int) {
	t.Helper()
	sameBody(t, c, n, c.requests()[n].body)
}

// sameBody fails the test when body, sent as request n of c, differs
// from the one recorded.
func sameBody(t *testing.T, c *cassette, n int, body []byte) {
	t.Helper()
	got := normal(t, jsonOf(t, body))
	want := normal(t, c.rec[n].request)
	if ok, g, w := sameJSON(got, want); !ok {
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		from := max(i-300, 0)
		t.Errorf("request %d differs from the one recorded at byte %d:\nsent     …%.600s\nrecorded …%.600s", n+1, i, g[from:], w[from:])
	}
}

func TestRecordedText(t *testing.T) {
	c := playCassette(t, "test_google_model.yaml")
	resp, err := recordedModel(t, c, "gemini-2.5-flash").Generate(context.Background(), &loop.Request{Messages: []loop.Message{
		{Role: loop.RoleSystem, Content: "You are a chatbot."}, {Role: loop.RoleUser, Content: "Hello!"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, c, 0)
	if resp.Message.Content != "Hello! How can I help you today?" || resp.FinishReason != "STOP" || resp.Cut() ||
		resp.ID != "bzlXaa_EE_aHqtsPi_zw8Ao" || resp.Model != "gemini-2.5-flash" || resp.Message.Items != nil {
		t.Errorf("response %+v", resp)
	}
	if u := resp.Usage; u != (loop.Usage{PromptTokens: 9, CompletionTokens: 43, TotalTokens: 52, ReasoningTokens: 34}) {
		t.Errorf("usage %+v", u)
	}
	if h := c.requests()[0].header.Get("X-Goog-Api-Key"); h != testKey {
		t.Errorf("key header %q", h)
	}
}

func TestRecordedStream(t *testing.T) {
	c := playCassette(t, "test_google_model_stream.yaml")
	zero := float32(0)
	var deltas []string
	resp, err := recordedModel(t, c, "gemini-2.0-flash-exp").Generate(context.Background(), &loop.Request{Temperature: &zero,
		Messages: []loop.Message{{Role: loop.RoleSystem, Content: "You are a helpful chatbot."}, {Role: loop.RoleUser, Content: "What is the capital of France?"}}},
		func(d loop.Delta) { deltas = append(deltas, d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, c, 0)
	if r := c.requests()[0]; r.query != "alt=sse" {
		t.Errorf("query %q", r.query)
	}
	if strings.Join(deltas, "|") != "The| capital of France| is Paris.\n" || resp.Message.Content != "The capital of France is Paris.\n" ||
		resp.FinishReason != "STOP" || resp.ID != "w1peaMz6INOvnvgPgYfPiQY" {
		t.Errorf("deltas %q, response %+v", deltas, resp)
	}
	if u := resp.Usage; u != (loop.Usage{PromptTokens: 13, CompletionTokens: 8, TotalTokens: 21}) {
		t.Errorf("usage %+v", u)
	}
}

// TestRecordedStreamedCallWithSignature: Gemini 3 streams a call with its
// thought signature; the next request sends the call back with it, byte
// for byte, and the function's result answers it.
func TestRecordedStreamedCallWithSignature(t *testing.T) {
	c := playCassette(t, "test_google_streaming_tool_call_thought_signature.yaml")
	m := recordedModel(t, c, "gemini-3-pro-preview")
	tools := []loop.ToolDef{{Name: "get_country", Parameters: json.RawMessage(`{"additionalProperties":false,"properties":{},"type":"object"}`)}}
	msgs := []loop.Message{{Role: loop.RoleUser, Content: "What is the capital of the user country? Call the tool"}}
	first, err := m.Generate(context.Background(), &loop.Request{Messages: msgs, Tools: tools}, func(loop.Delta) {})
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, c, 0)
	if tc := first.Message.ToolCalls; len(tc) != 1 || tc[0].Name != "get_country" || tc[0].Arguments != "{}" || tc[0].ID != "" ||
		first.Message.ItemsFrom != "gemini" || first.Usage.ReasoningTokens != 202 {
		t.Fatalf("first response %+v", first)
	}
	var sig string
	var reply struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					ThoughtSignature string `json:"thoughtSignature"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	_ = json.Unmarshal(bytes.TrimPrefix(bytes.SplitN(c.rec[0].reply, []byte("\r\n\r\n"), 2)[0], []byte("data: ")), &reply)
	sig = reply.Candidates[0].Content.Parts[0].ThoughtSignature
	call := first.Message
	call.ToolCalls[0].ID = "call_1" // the loop's, for a call that came without
	msgs = append(msgs, call, loop.Message{Role: loop.RoleTool, ToolCallID: "call_1", Name: "get_country", Content: "Mexico"})
	var text strings.Builder
	second, err := m.Generate(context.Background(), &loop.Request{Messages: msgs, Tools: tools}, func(d loop.Delta) { text.WriteString(d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, c, 1)
	if sent := c.requests()[1].body; sig == "" || !bytes.Contains(sent, []byte(`"thoughtSignature":"`+sig+`"`)) {
		t.Errorf("the signature %.20q… is not sent back as it came: %s", sig, sent)
	}
	if second.Message.Content != "The capital of Mexico is Mexico City." || text.String() != second.Message.Content || second.Usage.PromptTokens != 257 {
		t.Errorf("second response %+v", second)
	}
}

func TestRecordedCut(t *testing.T) {
	c := playCassette(t, "test_google_model_max_tokens.yaml")
	resp, err := recordedModel(t, c, "gemini-2.5-flash", gemini.MaxOutputTokens(5), gemini.ThinkingBudget(0)).Generate(context.Background(),
		&loop.Request{Messages: []loop.Message{{Role: loop.RoleSystem, Content: "You are a helpful chatbot."}, {Role: loop.RoleUser, Content: "What is the capital of France?"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, c, 0)
	if !resp.Cut() || resp.FinishReason != "MAX_TOKENS" || resp.Message.Content != "The capital of France is" {
		t.Errorf("response %+v", resp)
	}
}

// TestRecordedSafetyStop: a candidate Gemini stopped for safety, with no
// content, is a refused reply, not an empty answer.
func TestRecordedSafetyStop(t *testing.T) {
	c := playCassette(t, "test_google_model_safety_settings.yaml")
	resp, err := recordedModel(t, c, "gemini-1.5-flash").Generate(context.Background(),
		&loop.Request{Messages: []loop.Message{{Role: loop.RoleSystem, Content: "You hate the world!"}, {Role: loop.RoleUser, Content: "Tell me a joke about a Brazilians."}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Refused() || resp.FinishReason != "SAFETY" || resp.Message.Content != "" || resp.Usage.PromptTokens != 14 {
		t.Errorf("response %+v", resp)
	}
}

// TestRecordedTypedAnswer: a Format is sent as responseMimeType
// application/json and responseJsonSchema, its properties in order.
func TestRecordedTypedAnswer(t *testing.T) {
	c := playCassette(t, "test_google_native_output.yaml")
	schema := `{"description":"A city and its country.","properties":{"city":{"type":"string"},"country":{"type":"string"}},"required":["city","country"],"title":"CityLocation","type":"object"}`
	resp, err := recordedModel(t, c, "gemini-2.0-flash").Generate(context.Background(), &loop.Request{
		Messages: []loop.Message{{Role: loop.RoleUser, Content: "What is the largest city in Mexico?"}},
		Format:   &loop.Format{Name: "CityLocation", Schema: json.RawMessage(schema)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// onion adds the order of the properties, which genai's sorted keys
	// would lose; the rest is as recorded.
	var sent struct {
		GenerationConfig struct {
			ResponseJSONSchema map[string]any `json:"responseJsonSchema"`
		} `json:"generationConfig"`
	}
	body := c.requests()[0].body
	_ = json.Unmarshal(body, &sent)
	order, _ := json.Marshal(sent.GenerationConfig.ResponseJSONSchema["propertyOrdering"])
	if string(order) != `["city","country"]` {
		t.Errorf("property ordering %s", order)
	}
	sameBody(t, c, 0, bytes.Replace(body, []byte(`,"propertyOrdering":["city","country"]`), nil, 1))
	var city struct{ City, Country string }
	if err := json.Unmarshal([]byte(resp.Message.Content), &city); err != nil || city.City != "Mexico City" || city.Country != "Mexico" {
		t.Errorf("answer %q", resp.Message.Content)
	}
}

// TestRecordedThoughts: thought summaries are the reply's reasoning, and
// the model's parts, thought and signature included, go back unchanged.
func TestRecordedThoughts(t *testing.T) {
	c := playCassette(t, "test_google_model_thinking_part.yaml")
	m := recordedModel(t, c, "gemini-3-pro-preview", gemini.IncludeThoughts())
	tools := []loop.ToolDef{{Name: "dummy", Parameters: json.RawMessage(`{"additionalProperties":false,"properties":{},"type":"object"}`)}}
	msgs := []loop.Message{{Role: loop.RoleSystem, Content: "You are a helpful assistant."}, {Role: loop.RoleUser, Content: "How do I cross the street?"}}
	first, err := m.Generate(context.Background(), &loop.Request{Messages: msgs, Tools: tools}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, c, 0)
	if !strings.HasPrefix(first.Message.Reasoning, "**A Safe Street-Crossing Guide: My Thought Process**") ||
		!strings.HasPrefix(first.Message.Content, "Crossing the street safely") || first.Usage.ReasoningTokens != 1001 {
		t.Fatalf("first response: reasoning %.60q, content %.60q", first.Message.Reasoning, first.Message.Content)
	}
	msgs = append(msgs, first.Message, loop.Message{Role: loop.RoleUser, Content: "Considering the way to cross the street, analogously, how do I cross the river?"})
	second, err := m.Generate(context.Background(), &loop.Request{Messages: msgs, Tools: tools}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, c, 1)
	if second.Message.Content == "" || second.Message.Reasoning == "" {
		t.Errorf("second response %+v", second.Message)
	}
}

// TestRecordedParallelCalls: Gemini 3 asks for two calls at once, with
// IDs and a signature on the first; onion, through an agent, runs both
// and sends back the model's content as it came and both results in one
// content, in order, each with its call's ID (recorded by langchaingo
// through the same Go client).
func TestRecordedParallelCalls(t *testing.T) {
	c := playCassette(t, "TestGoogleAI_ParallelFunctionCallsWithSignature.httprr")
	temperature := func(location string) string { return "22°C" }
	tool, err := onion.NewTool(temperature, onion.Name("get_temperature"), onion.Description("Get the current temperature for a location"),
		onion.ParamNames("location"))
	if err != nil {
		t.Fatal(err)
	}
	a := agent(t, recordedModel(t, c, "gemini-3-flash-preview"), tool, onion.MaxParallel(2))
	res, err := a.Run(context.Background(), "What's the temperature in Paris and London?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "The temperature is currently 22°C in both Paris and London." || len(res.ToolCalls) != 2 ||
		res.ToolCalls[0].ID != "pkjly1p7" || res.ToolCalls[1].Arguments != `{"location":"London"}` {
		t.Errorf("result %+v", res)
	}
	if want := (onion.Usage{PromptTokens: 200, CompletionTokens: 103, TotalTokens: 303, ReasoningTokens: 56, Requests: 2}); res.Usage != want {
		t.Errorf("usage %+v, want %+v", res.Usage, want)
	}
	// The conversation onion sent is the one recorded; the agent's own
	// instructions and tool schema are its own.
	for n := range 2 {
		got := normal(t, jsonOf(t, c.requests()[n].body)).(map[string]any)["contents"]
		want := normal(t, c.rec[n].request).(map[string]any)["contents"]
		if ok, g, w := sameJSON(got, want); !ok {
			t.Errorf("request %d's contents differ:\nsent     %s\nrecorded %s", n+1, g, w)
		}
	}
}

// TestRecordedImageFromTool: an image a tool returned goes to Gemini 3
// inside its function response (as recorded, where the model went on to
// describe it), and to Gemini 2.5 after the function responses.
func TestRecordedImageFromTool(t *testing.T) {
	c := playCassette(t, "test_multimodal_tool_return_matrix[direct-binary-image-google_gemini3].yaml")
	m := recordedModel(t, c, "gemini-3-flash-preview")
	tools := []loop.ToolDef{{Name: "get_file", Parameters: json.RawMessage(`{"additionalProperties":false,"properties":{},"type":"object"}`)}}
	image := recordedImage(t, c.rec[3].request)
	msgs := []loop.Message{{Role: loop.RoleUser, Content: "Use the get_file tool now to retrieve a image file, then describe what you received."}}
	results := []loop.Message{
		{Content: "Unknown tool name: 'list_files'. Available tools: 'get_file'\n\nFix the errors and try again."},
		{Content: "1 validation error:\n```json\n[\n  {\n    \"type\": \"extra_forbidden\",\n    \"loc\": [\n      \"name\"\n    ],\n    \"msg\": \"Extra inputs are not permitted\",\n    \"input\": \"input_file_0.png\"\n  }\n]\n```\n\nFix the errors and try again."},
		{Images: []loop.Image{{MIMEType: "image/jpeg", Data: image}}},
	}
	var last *loop.Response
	for n := range 4 {
		resp, err := m.Generate(context.Background(), &loop.Request{Messages: msgs, Tools: tools}, nil)
		if err != nil {
			t.Fatal(err)
		}
		body := c.requests()[n].body
		if n == 3 {
			// onion names the image and refers to it in the response, as
			// the API documents: the rest is as recorded.
			for _, extra := range []string{`"images":[{"$ref":"image_1.jpg"}],`, `"displayName":"image_1.jpg",`, `"output":""`} {
				if !bytes.Contains(body, []byte(extra)) {
					t.Errorf("request 4 lacks %s", extra)
				}
				body = bytes.Replace(body, []byte(extra), nil, 1)
			}
		}
		sameBody(t, c, n, body)
		last = resp
		if n == 3 {
			break
		}
		call := resp.Message
		call.ToolCalls[0].ID = "call_" + string(rune('1'+n))
		r := results[n]
		r.Role, r.ToolCallID, r.Name = loop.RoleTool, call.ToolCalls[0].ID, call.ToolCalls[0].Name
		msgs = append(msgs, call, r)
	}
	if !strings.Contains(last.Message.Content, "kiwi") || last.Usage.PromptTokens != 2429 {
		t.Errorf("the last reply %+v", last)
	}

	// Gemini 2.5: the image after the function response, in the same
	// content (pydantic-ai sent it in a content of its own).
	c = playCassette(t, "test_multimodal_tool_return_matrix[direct-binary-image-google_2_5].yaml")
	m = recordedModel(t, c, "gemini-2.5-flash")
	msgs = msgs[:1]
	first, err := m.Generate(context.Background(), &loop.Request{Messages: msgs, Tools: tools}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameRequest(t, c, 0)
	call := first.Message
	call.ToolCalls[0].ID = "call_1"
	image = recordedImage(t, c.rec[1].request)
	msgs = append(msgs, call, loop.Message{Role: loop.RoleTool, ToolCallID: "call_1", Name: "get_file", Content: "See file 241a70.",
		Images: []loop.Image{{MIMEType: "image/jpeg", Data: image}}})
	second, err := m.Generate(context.Background(), &loop.Request{Messages: msgs, Tools: tools}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Contents []struct {
			Parts []struct {
				Text             string `json:"text"`
				FunctionResponse *struct {
					Name string `json:"name"`
				} `json:"functionResponse"`
				InlineData *struct {
					Data     string `json:"data"`
					MIMEType string `json:"mimeType"`
				} `json:"inlineData"`
			} `json:"parts"`
		} `json:"contents"`
	}
	_ = json.Unmarshal(c.requests()[1].body, &sent)
	p := sent.Contents[2].Parts
	if len(sent.Contents) != 3 || len(p) != 3 || p[0].FunctionResponse == nil || p[1].Text != "Images returned by the tool get_file:" ||
		p[2].InlineData == nil || p[2].InlineData.Data != base64.StdEncoding.EncodeToString(image) || p[2].InlineData.MIMEType != "image/jpeg" {
		t.Errorf("request 2: %.600s", c.requests()[1].body)
	}
	if !strings.Contains(second.Message.Content, "kiwi") {
		t.Errorf("the reply %q", second.Message.Content)
	}
}

// recordedImage is the bytes of the one image of a recorded request.
func recordedImage(t *testing.T, req any) []byte {
	t.Helper()
	b, _ := json.Marshal(req)
	i := bytes.Index(b, []byte(`"data":"`))
	if i < 0 {
		t.Fatal("no image in the recorded request")
	}
	s := b[i+len(`"data":"`):]
	s = s[:bytes.IndexByte(s, '"')]
	data, err := base64.URLEncoding.DecodeString(string(s))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRecordedError: the API's refusal of a caller without a key,
// recorded by langchaingo, is an error that names the API, the URL and
// the status, and is not sent again.
func TestRecordedError(t *testing.T) {
	c := playCassette(t, "TestGoogleAIErrorHandling.httprr")
	_, err := recordedModel(t, c, "gemini-2.0-flash").Generate(context.Background(),
		&loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "Hello"}}}, nil)
	var me *loop.ModelError
	if !errors.As(err, &me) || me.StatusCode != 403 || me.Retryable {
		t.Fatalf("error %v", err)
	}
	want := "gemini: POST " + c.URL + "/v1beta/models/gemini-2.0-flash:generateContent: 403 PERMISSION_DENIED: Method doesn't allow unregistered callers"
	if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), testKey) {
		t.Errorf("error %q", err)
	}
}
