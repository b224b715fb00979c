package bench

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// MCPFlightArgs are FlightArgs for the MCP SDK's typed tools: its schema
// inference reads a jsonschema tag as a description and rejects one that
// begins "minimum=", so the bounds cannot be said in a tag.
type MCPFlightArgs struct {
	From  string `json:"from" jsonschema:"the IATA code of the departure airport, such as LIS"`
	To    string `json:"to" jsonschema:"the IATA code of the arrival airport"`
	Date  string `json:"date" jsonschema:"the day of the flight, as YYYY-MM-DD"`
	Seats int    `json:"seats" jsonschema:"how many seats to book"`
}

// BenchmarkMCPTool calls book_flight through an MCP client session
// connected to a server over the SDK's in-memory transport: one op is one
// tools/call JSON-RPC round trip (the request encoded, piped, decoded,
// dispatched to the server's handler goroutine, and the reply the same way
// back). It is not comparable with BenchmarkStructTool's in-process calls,
// only within its group:
//
//   - baseline: Server.AddTool with a hand-written handler that decodes the
//     raw arguments with encoding/json, calls BookFlight and sends the same
//     result as the others (text and structuredContent), checking nothing;
//   - sdk: the SDK's typed mcp.AddTool with MCPFlightArgs in and Booking out,
//     which validates the arguments against the schema it inferred;
//   - onion: onion.NewTool(BookFlight) served by mcpserver.New.
func BenchmarkMCPTool(b *testing.B) {
	b.Run("baseline", func(b *testing.B) {
		tool, err := onion.NewTool(BookFlight)
		if err != nil {
			b.Fatal(err)
		}
		srv := mcp.NewServer(&mcp.Implementation{Name: "baseline", Version: "v0"}, nil)
		srv.AddTool(&mcp.Tool{Name: "book_flight", Description: tool.Description(), InputSchema: tool.Schema()},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var args FlightArgs
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, err
				}
				res, err := BookFlight(ctx, args)
				if err != nil {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
				}
				out, err := json.Marshal(res)
				if err != nil {
					return nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}, StructuredContent: res}, nil
			})
		callMCP(b, srv)
	})
	b.Run("sdk", func(b *testing.B) {
		srv := mcp.NewServer(&mcp.Implementation{Name: "sdk", Version: "v0"}, nil)
		mcp.AddTool(srv, &mcp.Tool{Name: "book_flight", Description: "Books seats on a flight and returns the booking."},
			func(ctx context.Context, _ *mcp.CallToolRequest, args MCPFlightArgs) (*mcp.CallToolResult, Booking, error) {
				res, err := BookFlight(ctx, FlightArgs(args))
				return nil, res, err
			})
		callMCP(b, srv)
	})
	b.Run("onion", func(b *testing.B) {
		srv, err := mcpserver.New(BookFlight)
		if err != nil {
			b.Fatal(err)
		}
		callMCP(b, srv)
	})
}

// callMCP connects a client to srv over in-memory transports and times
// calls of its book_flight tool with FlightJSON.
func callMCP(b *testing.B, srv *mcp.Server) {
	b.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { ss.Close(); ss.Wait() }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	params := &mcp.CallToolParams{Name: "book_flight", Arguments: json.RawMessage(FlightJSON)}
	// The first call, untimed, checks that every server sends the same text.
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		b.Fatal(err)
	}
	want, _ := BookFlight(ctx, FlightArgs{From: "LIS", To: "OSL", Date: "2026-12-24", Seats: 2})
	var got Booking
	if res.IsError || len(res.Content) != 1 {
		b.Fatalf("result %+v, want the text of %+v", res, want)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || json.Unmarshal([]byte(tc.Text), &got) != nil || got != want {
		b.Fatalf("content %+v, want the text of %+v", res.Content[0], want)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			b.Fatal(err)
		}
		if res.IsError {
			b.Fatalf("result: %+v", res)
		}
		sink = res
	}
}
