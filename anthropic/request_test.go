package anthropic

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// model is a Model for encoding tests, with no client.
func model(t *testing.T, opts ...Option) *Model {
	t.Helper()
	m, err := New("claude-test", append([]Option{APIKey("k")}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEncode: a conversation with every kind of message, against its
// golden body.
func TestEncode(t *testing.T) {
	temp := float32(0.3)
	req := &loop.Request{
		Temperature: &temp,
		Tools: []loop.ToolDef{
			{Name: "weather", Description: "Tells the weather <now>.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
			{Name: "noargs"},
		},
		Messages: []loop.Message{
			{Role: loop.RoleSystem, Content: "Be brief & clear."},
			{Role: loop.RoleUser, Content: "Weather in Paris and at run:7?"},
			{Role: loop.RoleAssistant, Content: "Let me look.", ToolCalls: []loop.ToolRequest{
				{ID: "toolu_1", Name: "weather", Arguments: `{"city":"Paris"}`},
				{ID: "call_run:7/1", Name: "weather", Arguments: `{"city":"run:7`}, // cut, and no ID the API takes
			}},
			{Role: loop.RoleTool, ToolCallID: "toolu_1", Name: "weather", Content: "sunny <b>"},
			{Role: loop.RoleTool, ToolCallID: "call_run:7/1", Name: "weather", Content: ""},
			{Role: loop.RoleUser, Content: "Token budget: 10 of 100 tokens left."},
		},
	}
	body, err := model(t).encode(req, "claude-test", false)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "encode.golden.json", body)
	if !json.Valid(body) {
		t.Fatalf("not JSON: %s", body)
	}
	// The ID the API would refuse is the same in the call and its result.
	id := wireID("call_run:7/1")
	if strings.Count(string(body), `"`+id+`"`) != 2 || !validID(id) || wireID("toolu_1") != "toolu_1" || wireID("call_run:7/2") == id {
		t.Errorf("the ID %q", id)
	}
}

func validID(id string) bool {
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			return false
		}
	}
	return id != ""
}

// TestEncodeItems: an assistant message with Items sends them byte for
// byte, but for a tool_use whose ID the loop replaced and one it dropped;
// Items of another wire are not read.
func TestEncodeItems(t *testing.T) {
	items := `[{"type":"thinking","thinking":"Think <a>.","signature":"c2ln"},{"type":"redacted_thinking","data":"ZGF0YQ=="},` +
		`{"type":"tool_use","id":"toolu_A","name":"weather","input":{"city":"Paris"}},{"type":"tool_use","id":"bad id","name":"weather","input":{}}]`
	msg := loop.Message{Role: loop.RoleAssistant, Items: json.RawMessage(items), ItemsFrom: "anthropic", ToolCalls: []loop.ToolRequest{
		{ID: "toolu_A", Name: "weather", Arguments: `{"city":"Paris"}`}, {ID: "call_r_1_1", Name: "weather", Arguments: `{}`}}}
	blocks, err := assistantBlocks(msg)
	if err != nil {
		t.Fatal(err)
	}
	got := string(appendBlocks(nil, blocks))
	want := `[{"type":"thinking","thinking":"Think <a>.","signature":"c2ln"},{"type":"redacted_thinking","data":"ZGF0YQ=="},` +
		`{"type":"tool_use","id":"toolu_A","name":"weather","input":{"city":"Paris"}},{"id":"call_r_1_1","input":{},"name":"weather","type":"tool_use"}]`
	if got != want {
		t.Errorf("blocks\n got %s\nwant %s", got, want)
	}

	msg.ToolCalls = nil // the loop dropped the calls: no tools were offered
	blocks, _ = assistantBlocks(msg)
	if got := string(appendBlocks(nil, blocks)); strings.Contains(got, "tool_use") || !strings.Contains(got, "redacted_thinking") {
		t.Errorf("without calls: %s", got)
	}

	msg.ItemsFrom = "" // the Responses API's items
	msg.Content = "hi"
	blocks, _ = assistantBlocks(msg)
	if got := string(appendBlocks(nil, blocks)); got != `[{"type":"text","text":"hi"}]` {
		t.Errorf("items of another wire: %s", got)
	}
}

// TestEncodeLeavesOutEmpty: the API refuses empty text blocks and empty
// messages; a system message after the start is said as the user.
func TestEncodeLeavesOutEmpty(t *testing.T) {
	system, msgs, err := wireMessages([]loop.Message{
		{Role: loop.RoleSystem, Content: ""},
		{Role: loop.RoleUser, Content: "hi"},
		{Role: loop.RoleAssistant, Content: ""},
		{Role: loop.RoleSystem, Content: "late"},
	})
	if err != nil || len(system) != 0 || len(msgs) != 2 || msgs[1].role != "user" || string(msgs[1].blocks[0]) != `{"type":"text","text":"late"}` {
		t.Errorf("system %q, messages %+v, %v", system, msgs, err)
	}
	if _, _, err := wireMessages([]loop.Message{{Role: "robot", Content: "x"}}); err == nil {
		t.Error("an unknown role was sent")
	}
	if _, err := imageBlock(loop.Image{MIMEType: "image/bmp", Data: []byte{1}}); err == nil || !strings.Contains(err.Error(), "image/png") {
		t.Errorf("a BMP: %v", err)
	}
}

// TestOutputSchema: what structured output does not take goes into the
// descriptions, in order, against a golden file.
func TestOutputSchema(t *testing.T) {
	in := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{
		"name":{"type":"string","minLength":1,"maxLength":40,"description":"who"},
		"age":{"type":"integer","minimum":0,"maximum":150},
		"email":{"type":"string","format":"email"},
		"when":{"type":"string","format":"iso-week"},
		"tags":{"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":2,"maxItems":5},
		"one":{"oneOf":[{"type":"string"},{"type":"object","properties":{"x":{"type":"number","multipleOf":0.5}}}]},
		"free":{"type":"object"}
	},"required":["name","age"]}`
	out, err := outputSchema([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "output_schema.golden.json", out)
	var v map[string]any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"minimum"`, `"maximum"`, `"minLength"`, `"maxItems"`, `"oneOf"`, `"multipleOf"`, `"$schema"`, `"iso-week"}`} {
		if strings.Contains(string(out), key) {
			t.Errorf("%s is still a keyword", key)
		}
	}
	if _, err := outputSchema([]byte(strings.Repeat(`{"items":`, 70) + "{}" + strings.Repeat("}", 70))); err == nil {
		t.Error("a schema 70 levels deep was taken")
	}
}

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n got %s\nwant %s", name, got, want)
	}
}

// TestNewChecks: options that cannot work are refused when the Model is
// made, naming what to change.
func TestNewChecks(t *testing.T) {
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{Thinking(512)}, "at least 1024"},
		{[]Option{Thinking(4096), MaxTokens(4096)}, "raise MaxTokens"},
		{[]Option{MaxTokens(0)}, "positive"},
		{[]Option{CacheTTL(10 * 60 * 1e9)}, "5m or 1h"},
		{[]Option{BaseURL("ftp://x")}, "not an http"},
	} {
		if _, err := New("m", tc.opts...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v", err)
		}
	}
	if _, err := New(" "); err == nil {
		t.Error("a Model without a name")
	}
	m := model(t, Thinking(2000))
	if m.maxTokens != 2000+DefaultMaxTokens {
		t.Errorf("max_tokens %d with a budget of 2000", m.maxTokens)
	}
}

// TestCheckTools: what the Messages API refuses of a tool, named.
func TestCheckTools(t *testing.T) {
	m := model(t)
	ok := []loop.ToolDef{{Name: "a-b_C9"}, {Name: "x", Parameters: json.RawMessage(`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`)}}
	if err := m.CheckTools(ok); err != nil {
		t.Errorf("%v", err)
	}
	for _, tc := range []struct {
		def  loop.ToolDef
		says string
	}{
		{loop.ToolDef{Name: "fs.read"}, `tool "fs.read": the Messages API takes tool names of letters, digits, _ and -, not '.'`},
		{loop.ToolDef{Name: strings.Repeat("n", 129)}, "1 to 128 characters"},
		{loop.ToolDef{Name: "t", Parameters: json.RawMessage(`{"type":"object","oneOf":[{}]}`)}, "keyword oneOf"},
		{loop.ToolDef{Name: "t", Parameters: json.RawMessage(`{"properties":{}}`)}, "type of its input_schema is missing"},
		{loop.ToolDef{Name: "t", Parameters: json.RawMessage(`[1]`)}, "not a JSON Schema object"},
	} {
		if err := m.CheckTools([]loop.ToolDef{tc.def}); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %q", tc.def.Name, err, tc.says)
		}
	}
}

// TestEncodeOptions: thinking drops the temperature, which the API does
// not take with it; a strict tool's schema is held as a typed answer's.
func TestEncodeOptions(t *testing.T) {
	temp := float32(0.5)
	req := &loop.Request{Temperature: &temp, Messages: []loop.Message{{Role: loop.RoleUser, Content: "q"}},
		Tools: []loop.ToolDef{{Name: "s", Strict: true, Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"additionalProperties":false}`)}}}
	for _, tc := range []struct {
		opt        Option
		has, hasnt string
	}{
		{AdaptiveThinking(), `"thinking":{"type":"adaptive"}`, `"temperature"`},
		{Thinking(1500), `"thinking":{"type":"enabled","budget_tokens":1500}`, `"temperature"`},
		{NoCache(), `"temperature":0.5`, `"thinking"`},
	} {
		body, err := model(t, tc.opt).encode(req, "m", true)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), tc.has) || strings.Contains(string(body), tc.hasnt) {
			t.Errorf("%s", body)
		}
		if want := `"input_schema":{"type":"object","properties":{"n":{"type":"integer","description":"{minimum: 1}"}},"required":["n"],"additionalProperties":false},"strict":true`; !strings.Contains(string(body), want) {
			t.Errorf("the strict tool: %s", body)
		}
	}
}
