// Package mcpserver serves onion tools to any Model Context Protocol host
// (Claude Desktop, IDEs, other agents), using the official Go SDK.
//
// Whatever onion.NewAgent takes as tools, New takes too: documented funcs,
// pointers to structs whose methods are tools, *onion.Tool and []*onion.Tool.
// Each tool is registered under its onion name with its description and the
// very parameter schema an agent would send to a model (Tool.Schema), and
// its intent becomes MCP annotations:
//
//	onion.Read              readOnlyHint: true
//	onion.Write             destructiveHint: true (it may change or remove)
//	onion.Write, Additive() destructiveHint: false (it only adds)
//	onion.Delete            destructiveHint: true
//	Idempotent()            idempotentHint: true
//
// A call runs through drive.RunCall, the very path the agent loop runs
// each call through, so no rule of the loop is skipped at this door:
// approval, the ToolTimeout, panics and runtime.Goexit turned into
// outcomes. Its result is a text content holding what the model would read
// (a string as it is, anything else as JSON, with <, > and & as they are),
// byte for byte what Tool.Call returns, and not capped (the host applies
// its own limits; a cut would also break structuredContent). A tool whose Go result is
// structured also declares an outputSchema and sends that same JSON as
// structuredContent: a struct result as the object it is, any other value
// (a number, a slice, a map, a pointer) wrapped as {"result": …}, with the
// output schema saying so. Text results, and raw tools whose result type
// is unknown, declare no output schema; for them a result that is a JSON
// object is still sent as structuredContent. A result nested deeper than
// the loop allows, or cyclic, fails the call as it fails in the loop.
//
// Failures are results, not protocol errors, so the model on the other side
// can correct itself: arguments that do not fit the schema, an error the
// tool returns, a panic and a timeout all come back with isError: true and
// the text onion's own loop shows its model (less the "error: " that
// begins a failed call's, which isError says), or, for a write or delete
// cut off mid-call, that its outcome is unknown and should be checked
// before calling again. A panic never
// takes the server down.
//
// isError alone says "failed", so the two outcomes it would misreport are
// also written in the result's _meta, for a client that keeps onion's
// outcomes (mcpclient does; any other peer reads a plain isError result):
//
//	"io.github.onionkit/outcome"  "outcome_unknown" (a write or delete cut
//	                              off mid-call) or "denied"
//	"io.github.onionkit/reason"   why: "it panicked: kaboom", "it timed out
//	                              after 30s", "the approver said no"
//
// A failed call, a read cut off and a success carry neither key.
//
// A call that needs approval (RequireApproval, ApproveIf, //onion:approve)
// runs only once someone says yes, as in the loop. By default the MCP
// client's user is asked through elicitation: with elicitation/create in
// the middle of the call on the protocol versions before 2026-07-28, and
// on 2026-07-28 with an input request the client answers by calling again
// (the go-sdk's multi round-trip requests); an answer only counts for the
// very call it was asked about. The question shows the whole of the
// arguments, with control characters, escape sequences and invisible or
// reordering runes (U+202E) written as escapes; arguments too long to show
// (over 32 KiB) are not asked about. A client without the elicitation
// capability, arguments too long to show, a "no", an error and no answer
// within ApprovalTimeout all deny the call: it does not run, and the result is an error with the
// loop's words (onion.DeniedText). Approver lets the program decide
// instead. Either way the decision reaches drive.RunCall as its
// CallConfig.Approver. The tool's tools/list entry says so in its _meta,
// "io.github.onionkit/approval": "required", so that an onion client
// (mcpclient's ServerApproves, onion tools -mcp) can show who approves it.
//
// ServeStdio is the whole main of a stdio server:
//
//	func main() {
//		if err := mcpserver.ServeStdio(context.Background(), builtin.NewTodoList()); err != nil {
//			log.Fatal(err)
//		}
//	}
//
// A line on stdin that is not a JSON-RPC message is answered with a
// JSON-RPC error, and the server goes on serving.
//
// Handler serves the same tools over streamable HTTP, on every protocol
// version the SDK speaks; HTTPOptions passes the transport's options.
package mcpserver
