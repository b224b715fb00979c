// Package script turns small Starlark functions into onion tools: connectors
// to one HTTP application, written in a few lines and run in a sandbox.
//
// A .star file's top-level functions whose names do not start with "_" are
// the tools. The docstring is the doc comment: its first paragraph is the
// description the model reads, "name: text" lines describe the parameters,
// and onion: lines are the same directives as in Go doc comments.
//
//	def ticket_text(ticket_id):
//	    """The readable text of a ticket.
//
//	    ticket_id: the ticket's id
//
//	    onion:intent read
//	    """
//	    answer = request("GET", "/api/tickets/" + ticket_id)
//	    if answer.status == 404:
//	        fail("no such ticket")
//	    return {"text": ok(answer)["body"]}
//
// Load the file with the application's address and its credentials, and give
// the tools to an agent:
//
//	tools, err := script.Load("tickets.star",
//		script.BaseURL("https://tickets.example.com"),
//		script.Header("Authorization", "Bearer "+token))
//	agent, err := onion.NewAgent("support", tools)
//
// # Parameters
//
// A parameter without a default is required; one with a default is optional,
// and the default's type is its JSON type (limit=10 is an integer). A
// parameter without a default is a string unless its docstring line names a
// type: "limit (integer): how many", or (number), (boolean), (array),
// (object). The schema allows no other properties.
//
// # What a script can do
//
// Scripts are Starlark (no while loops, no recursion, no load) with these
// names besides Starlark's own (fail, len, range, ...):
//
//   - request(method, path, query=None, json=None, body=None, headers=None)
//     sends one HTTP request to the application and returns a response with
//     status (int), headers (a dict of canonical names such as "Location" to
//     values, several joined by ", "), body (text), truncated (bool) and
//     json() (the body parsed).
//   - ok(response) fails unless the status is 2xx and returns
//     {"status": int, "body": text, "json": parsed body or None}.
//   - json.encode, json.decode and json.indent.
//
// What a script prints is discarded.
//
// A tool returns a dict, list, string, number, bool or None; the model gets
// a string as it is and anything else as JSON, as from a Go tool.
//
// # The sandbox
//
//   - Requests go to the BaseURL's scheme and host only. A path must start
//     with "/" and may not contain "..", "?" or "#"; query parameters go in
//     query=. Redirects are not followed: the script sees the 3xx status and
//     the Location header.
//   - The intent limits the methods: a read tool may GET and HEAD, a write
//     tool (the default, as for Go tools) also POST, PUT and PATCH, and only
//     a delete tool may DELETE.
//   - Headers given with Header are added by Go to every request. The script
//     cannot read them, and cannot set a header of the same name; their
//     values are replaced by "[redacted]" wherever the application echoes
//     them in response headers or bodies.
//   - Each call may make at most MaxRequests requests (default 10), run for
//     Timeout (default 20s, covering requests in flight) and take MaxSteps
//     Starlark steps (default 1,000,000). A response body longer than
//     MaxResponseBytes (default 1 MiB) is cut there, with truncated set and
//     a marker appended to body; json() of a cut body is an error.
//   - A script error (a syntax error at load, a runtime error, fail) becomes
//     an error naming the file, line and function; a call that fails after
//     sending a POST, PUT, PATCH or DELETE wraps onion.ErrOutcomeUnknown. A
//     panic inside the runtime is recovered and reported as an error.
package script
