// Package mcpclient turns the tools of a Model Context Protocol server into
// onion tools, using the official Go SDK.
//
// Connect to a server and hand its tools to an agent:
//
//	tools, err := mcpclient.Command(ctx, "npx", "-y", "@modelcontextprotocol/server-everything")
//	if err != nil {
//		return err
//	}
//	agent, err := onion.NewAgent("helper", tools)
//	if err != nil {
//		return err
//	}
//	defer agent.Close() // ends the MCP session
//
// Each server tool becomes an onion.NewRawTool with the server's input
// schema, kept as the server sent it (a list of types, an older draft's
// keywords and all), and its description; onion validates the model's
// arguments against that schema before the call leaves the process. A
// tool that cannot be used (a schema no JSON Schema validator accepts, a
// tool that runs only as a task) is left out, never the whole server: it
// is logged, and Connect's Server lists it with why (LeftOutError). The
// tool's annotations decide its intent:
//
//	readOnlyHint: true      onion.Read
//	destructiveHint: true   onion.Delete
//	anything else           onion.Write
//	idempotentHint: true    onion.Idempotent()
//
// MCP's default for a missing destructiveHint is true, but an onion Delete
// is only meant for tools that say they remove things, so a tool must say
// destructiveHint: true to become one; tools without annotations are
// writes, which onion already runs one at a time and exactly once.
//
// Onion tool names must match ^[a-zA-Z0-9_-]{1,64}$, a rule MCP does not
// impose: other characters become "_", long names are cut, and a clash gets
// a numeric suffix; the server is still called by its own name.
//
// A call's result is the text of its content (text items joined by blank
// lines; images, audio and links described in brackets) or, with no
// content, its structuredContent as JSON. A result with isError: true is a
// Go error whose text is the server's, which the loop shows the model.
// A server that goes away mid-call gives an error wrapping
// onion.ErrOutcomeUnknown, so the loop ends a write as outcome_unknown:
// nobody knows whether it took effect. A call made after the server went
// away, or after Close, fails plainly, since it never left the process.
//
// An onion server (mcpserver) keeps its outcomes across the door: an
// isError result whose _meta says "io.github.onionkit/outcome":
// "outcome_unknown" (a write cut off on the server by its timeout, a
// panic, or a connection of its own that broke) is an error wrapping
// onion.ErrOutcomeUnknown too, whose text is the server's reason
// ("io.github.onionkit/reason"), so that this loop ends the call
// outcome_unknown, skips the later writes of the response, and words it
// as the server's loop did, once. Without a reason the result's text
// stands in. Only isError results are read so, and other servers' results
// never: an isError result without that key is a plain failure, whatever
// its text says.
//
// A call that the server denied ("io.github.onionkit/outcome": "denied",
// as when it needs approval and its server has no approver, since
// mcpclient cannot be asked through elicitation) is a plain failure with
// the server's denial text: it did not run, and a failed write skips the
// later writes as a denied one does, but it was not this agent's user who
// said no, so it is not recorded as this loop's denied. Give the server an
// approver (mcpserver.Approver) for such tools.
//
// Errors name the server by its serverInfo name and how it was reached:
// MCP server "mcp-servers/everything" (npx -y
// @modelcontextprotocol/server-everything). A streamable HTTP server that
// stops answering mid-call is given up on after one reconnect attempt.
//
// All the tools of one server share one session. It is closed by
// onion.Agent.Close (it is each tool's WithCloser resource), or by
// Server.Close; closing it again does nothing. Closing a command's session
// ends the server and everything it started (its process group, such as
// npx's node), within about a second even when the server does not exit
// on its own, and a server that exits when asked is no error. The tool list
// is read once, at connect time.
//
// The client declares only what it serves: no capabilities by default, and
// roots when Roots names directories for the server to work in.
package mcpclient
