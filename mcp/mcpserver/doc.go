// Package mcpserver serves onion tools to any Model Context Protocol host
// (Claude Desktop, IDEs, other agents), using the official Go SDK.
//
// Whatever onion.NewAgent takes as tools, New takes too: documented funcs,
// pointers to structs whose methods are tools, *onion.Tool and []*onion.Tool.
// Each tool is registered under its onion name with its description and the
// very parameter schema an agent would send to a model (Tool.Schema), and
// its intent becomes MCP annotations:
//
//	onion.Read    readOnlyHint: true
//	onion.Write   destructiveHint: false
//	onion.Delete  destructiveHint: true
//	Idempotent()  idempotentHint: true
//
// A call runs the tool as the agent loop would. Its result is a text content
// holding what the model would read (a string as it is, anything else as
// JSON). A tool whose Go result is structured also declares an outputSchema
// and sends structuredContent: a struct result as the object it is, any
// other value (a number, a slice, a map, a pointer) wrapped as
// {"result": …}, with the output schema saying so. Text results, and raw
// tools whose result type is unknown, declare no output schema; for them a
// result that is a JSON object is still sent as structuredContent.
//
// Failures are results, not protocol errors, so the model on the other side
// can correct itself: arguments that do not fit the schema, an error the
// tool returns and a panic all come back with isError: true and the error's
// text, the text Tool.Call's error has and onion's own loop shows its model
// (after "error: "). A panic never takes the server down.
//
// ServeStdio is the whole main of a stdio server:
//
//	func main() {
//		if err := mcpserver.ServeStdio(context.Background(), builtin.NewTodoList()); err != nil {
//			log.Fatal(err)
//		}
//	}
//
// Handler serves the same tools over streamable HTTP.
package mcpserver
