package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/nlpodyssey/openai-agents-go/agents"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/adk/tool/toolconfirmation"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/bench/internal/plain"
)

// The arguments a model sends to book_flight and add.
const (
	FlightJSON = `{"from":"LIS","to":"OSL","date":"2026-12-24","seats":2}`
	AddJSON    = `{"a":1.5,"b":2.25}`
)

// A ToolCall is one framework's way of calling the same tool: the model's
// JSON arguments in, the text the model reads out.
type ToolCall struct {
	Name string // baseline, onion, onion_generated, onion_typed, eino, agents, adk
	Args string
	Call func(ctx context.Context, args string) (string, error)
}

// StructToolCalls are the ways of calling book_flight, a func of one
// struct argument of four fields. BenchmarkStructTool and cmd/callgrind
// measure them.
func StructToolCalls() ([]ToolCall, error) {
	reflected, err1 := onion.NewTool(plain.BookFlight, onion.Name("book_flight"))
	generated, err2 := onion.NewTool(BookFlight)
	typed, err3 := onion.NewTypedTool(BookFlight)
	eino, err4 := utils.InferTool("book_flight", "Books seats on a flight.", BookFlight)
	oa := agents.NewFunctionTool("book_flight", "Books seats on a flight.", BookFlight)
	adkSchema, err5 := jsonschema.For[adkBookArgs](nil)
	if err5 == nil {
		seats := adkSchema.Properties["seats"]
		seats.Minimum, seats.Maximum = ptr(1.0), ptr(9.0)
	}
	adk, err6 := adkTool("book_flight", "Books seats on a flight.", adkSchema,
		func(ctx tool.Context, a adkBookArgs) (Booking, error) { return BookFlight(ctx, FlightArgs(a)) })
	if err := firstErr(err1, err2, err3, err4, err5, err6); err != nil {
		return nil, err
	}
	return []ToolCall{
		{"baseline", FlightJSON, func(ctx context.Context, args string) (string, error) {
			var a FlightArgs
			if err := json.Unmarshal([]byte(args), &a); err != nil {
				return "", err
			}
			res, err := BookFlight(ctx, a)
			if err != nil {
				return "", err
			}
			out, err := json.Marshal(res)
			return string(out), err
		}},
		{"onion", FlightJSON, reflected.Call},
		{"onion_generated", FlightJSON, generated.Call},
		{"onion_typed", FlightJSON, typed.Call},
		{"eino", FlightJSON, func(ctx context.Context, args string) (string, error) { return eino.InvokableRun(ctx, args) }},
		{"agents", FlightJSON, agentsCall(oa)},
		{"adk", FlightJSON, adk},
	}, nil
}

// PositionalToolCalls are the ways of calling add, a func of two numbers.
// Only onion takes positional parameters: the others get AddArgs.
func PositionalToolCalls() ([]ToolCall, error) {
	reflected, err1 := onion.NewTool(plain.Add, onion.Name("add"))
	generated, err2 := onion.NewTool(Add)
	eino, err3 := utils.InferTool("add", "Returns the sum of two numbers.",
		func(ctx context.Context, args AddArgs) (float64, error) { return Add(args.A, args.B), nil })
	oa := agents.NewFunctionTool("add", "Returns the sum of two numbers.",
		func(ctx context.Context, args AddArgs) (float64, error) { return Add(args.A, args.B), nil })
	adkSchema, err4 := jsonschema.For[AddArgs](nil)
	adk, err5 := adkTool("add", "Returns the sum of two numbers.", adkSchema,
		func(ctx tool.Context, a AddArgs) (float64, error) { return Add(a.A, a.B), nil })
	if err := firstErr(err1, err2, err3, err4, err5); err != nil {
		return nil, err
	}
	return []ToolCall{
		{"baseline", AddJSON, func(ctx context.Context, args string) (string, error) {
			var a AddArgs
			if err := json.Unmarshal([]byte(args), &a); err != nil {
				return "", err
			}
			out, err := json.Marshal(Add(a.A, a.B))
			return string(out), err
		}},
		{"onion", AddJSON, reflected.Call},
		{"onion_generated", AddJSON, generated.Call},
		{"eino", AddJSON, func(ctx context.Context, args string) (string, error) { return eino.InvokableRun(ctx, args) }},
		{"agents", AddJSON, agentsCall(oa)},
		{"adk", AddJSON, adk},
	}, nil
}

// agentsCall calls an openai-agents-go tool and turns its result into text
// as its runner does (run_impl.go: a string as it is, anything else
// through json.Marshal).
func agentsCall(t agents.FunctionTool) func(ctx context.Context, args string) (string, error) {
	return func(ctx context.Context, args string) (string, error) {
		res, err := t.OnInvokeTool(ctx, args)
		if err != nil {
			return "", err
		}
		switch v := res.(type) {
		case string:
			return v, nil
		case []byte:
			return string(v), nil
		}
		out, err := json.Marshal(res)
		return string(out), err
	}
}

// adkBookArgs are FlightArgs for ADK, whose schema inference takes a
// jsonschema tag as a description: the bounds are set on its schema.
type adkBookArgs struct {
	From  string `json:"from" jsonschema:"the IATA code of the departure airport, such as \"LIS\""`
	To    string `json:"to" jsonschema:"the IATA code of the arrival airport"`
	Date  string `json:"date" jsonschema:"the day of the flight, as YYYY-MM-DD"`
	Seats int    `json:"seats" jsonschema:"how many seats to book"`
}

// adkTool makes an ADK function tool and returns its call as ADK makes it:
// the arguments arrive decoded, as genai decodes a FunctionCall's Args
// into a map, and the result leaves as the map genai encodes into the
// next request's FunctionResponse. Both ends are counted.
func adkTool[A, R any](name, desc string, schema *jsonschema.Schema, fn functiontool.Func[A, R]) (func(ctx context.Context, args string) (string, error), error) {
	if schema == nil {
		return nil, fmt.Errorf("adk %s: no schema", name)
	}
	t, err := functiontool.New(functiontool.Config{Name: name, Description: desc, InputSchema: schema}, fn)
	if err != nil {
		return nil, err
	}
	run, ok := t.(interface {
		Run(tool.Context, any) (map[string]any, error)
	})
	if !ok {
		return nil, fmt.Errorf("adk %s: %T has no Run method", name, t)
	}
	return func(ctx context.Context, args string) (string, error) {
		var m map[string]any
		if err := json.Unmarshal([]byte(args), &m); err != nil {
			return "", err
		}
		res, err := run.Run(adkContext{ctx: ctx}, m)
		if err != nil {
			return "", err
		}
		out, err := json.Marshal(res)
		return string(out), err
	}, nil
}

// adkContext is the least of a tool.Context that a function tool's Run
// uses: the context, and no confirmation asked for. Its other methods are
// never called here.
type adkContext struct {
	tool.Context
	ctx context.Context
}

func (c adkContext) Deadline() (time.Time, bool)                          { return c.ctx.Deadline() }
func (c adkContext) Done() <-chan struct{}                                { return c.ctx.Done() }
func (c adkContext) Err() error                                           { return c.ctx.Err() }
func (c adkContext) Value(key any) any                                    { return c.ctx.Value(key) }
func (c adkContext) ToolConfirmation() *toolconfirmation.ToolConfirmation { return nil }

func ptr[T any](v T) *T { return &v }

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
