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
//	    return {"text": dig(ok(answer), "body")}
//
// Load the file with the application's address and its credentials, and give
// the tools to an agent (Example_agent):
//
//	tools, err := script.Load("testdata/tickets.star",
//		script.BaseURL(trackerURL),
//		script.Header("Authorization", "Bearer "+token))
//	if err != nil {
//		log.Fatal(err)
//	}
//	agent, err := onion.NewAgent("support", tools)
//	if err != nil {
//		log.Fatal(err)
//	}
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
//   - request(method, path, query=None, body=None, headers=None) sends one
//     HTTP request to the application. A dict or list body is sent as JSON
//     (Content-Type application/json unless headers= sets one), a string
//     as it is (text/plain unless headers= says otherwise), bytes as
//     application/octet-stream; json= is accepted as another name for a
//     JSON body. It returns a response with status (int), headers
//     (lower-case names, such as "location", to values, several joined by
//     ", "; a lookup ignores case, and headers.get("location") works), text
//     (the body, as text; body is the same), truncated (bool) and json()
//     (the body parsed).
//   - ok(response) fails unless the status is 2xx and returns what the
//     answer holds: its JSON decoded when its Content-Type says JSON or
//     the body is a JSON object or array (many servers send JSON as
//     text/plain), otherwise its text, None for an empty body. So dig(ok(answer), "body") reads the JSON's body field;
//     the response keeps its status, headers and text.
//   - attempt(fn, *args, **kwargs) calls fn without ending the call when it
//     fails, and returns a struct with ok (bool), value (what fn returned,
//     None when it failed) and error (the message, None when it did not).
//     The call's limits (MaxSteps, MaxMemory, Timeout, MaxRequests) are not failures
//     it catches: they end the call.
//   - dig(value, key, ..., default=None) looks keys up one after the other:
//     dict keys, list indexes (negative from the end) and attributes, such
//     as dig(ok(answer), "owner", "name"). It returns default as
//     soon as one is missing or a value is None.
//   - re, regular expressions in Go's RE2 syntax (no backreferences or
//     lookaround; time linear in the input): re.match(pattern, text)
//     matches at the start and re.search(pattern, text) anywhere, each
//     returning a match or None; a match m has m.group() (the whole match),
//     m.group(n) or m.group(name), m.groups(), m.groupdict(), m.start(n)
//     and m.end(n). re.findall(pattern, text) returns the matches (or the
//     group, or tuples of the groups, when the pattern has groups);
//     re.sub(pattern, repl, text, count=0) replaces them with repl, a string
//     in which $1 and ${name} stand for groups, or a function of the match;
//     re.split(pattern, text, maxsplit=0) splits text.
//   - text, what a connector does to an answer before the model reads it:
//     text.strip(s), text.split(s, sep=None, maxsplit=-1) (on white space or
//     sep; the parts stripped, empty ones left out), text.lines(s) (stripped,
//     without blank lines), text.words(s), text.squash(s) (every run of
//     white space made one space), text.truncate(s, n, marker="…") (at
//     most n characters, ending at a space when one is near, then marker),
//     text.lower(s) and text.upper(s).
//   - html.parse(text) parses a page and xml.parse(text) an XML answer;
//     each returns a document node. A node has tag, text (the text inside
//     it; for HTML without scripts and styles, a line per block), attrs (a
//     dict), attr(name, default=None), children (its elements), select(css)
//     (the elements under it that match a CSS selector, in document order)
//     and select_one(css) (the first, or None). In XML, selectors match
//     element and attribute names by their local part, ignoring case
//     (select("pubdate") finds <pubDate>, "creator" finds <dc:creator>);
//     tag and attrs keep the names as written.
//   - json.encode, json.decode and json.indent.
//
// What a script prints is discarded. A tool that scrapes a status page and
// one that reads an API answer which may be missing (testdata/status.star):
//
//	def incidents(limit=5):
//	    """The open incidents on the status page.
//
//	    limit: at most this many
//
//	    onion:intent read
//	    """
//	    page = html.parse(ok(request("GET", "/status")))
//	    found = []
//	    for row in page.select("table.incidents tr")[:limit]:
//	        title = text.squash(row.select_one("td.title").text)
//	        since = re.search("[0-9]{4}-[0-9]{2}-[0-9]{2}", row.text)
//	        found.append({"title": text.truncate(title, 40), "since": since.group() if since else None})
//	    return found
//
//	def incident(id):
//	    """One incident's owner, or why it is not known.
//
//	    id: the incident's id
//
//	    onion:intent read
//	    """
//	    answer = attempt(ok, request("GET", "/api/incidents/" + id))
//	    if not answer.ok:
//	        return "unknown: " + answer.error
//	    return {"owner": dig(answer.value, "owner", "name", default="nobody")}
//
// A tool returns a dict, list, string, number, bool or None; the model gets
// a string as it is and anything else as JSON, as from a Go tool.
//
// # The sandbox
//
//   - Requests go to the BaseURL's scheme and host only. A path must start
//     with "/" and may not contain "..", "?" or "#"; query parameters go in
//     query=. Redirects are not followed: the script sees the 3xx status and
//     the location header.
//   - The intent limits the methods: a read tool may GET and HEAD, a write
//     tool (the default, as for Go tools) also POST, PUT and PATCH, and only
//     a delete tool may DELETE. The same holds for the method a request
//     asks the application to act as: an X-HTTP-Method-Override,
//     X-HTTP-Method or X-Method-Override header, or a _method query
//     parameter or body key, naming a method the tool may not use is
//     refused before anything is sent.
//   - Headers given with Header, and query parameters given with Query, are
//     added by Go to every request. The script cannot read them, and cannot
//     set a header whose name is theirs once case and punctuation are
//     ignored (X_Api_Key, x.api.key and XApiKey are X-Api-Key to some
//     servers), nor a query parameter whose name is theirs in any case, nor
//     Host, Content-Length, Transfer-Encoding, Connection, Cookie, TE,
//     Trailer or Upgrade, nor Range, If-Range or Accept-Encoding (a
//     credential fetched a piece at a time, or compressed, would escape
//     redaction).
//   - Wherever the application echoes one of those values back, the script
//     reads "[redacted]". What is redacted: each value and each part of it
//     an application parses out (the token after a scheme such as Bearer,
//     the value of each name=value parameter, as in a Cookie header or
//     Token token="...", unquoted and percent-decoded, and for Basic the
//     decoded user:password and the password), whole when shorter than 12
//     bytes and otherwise any run of 12 or more of its bytes (a truncated
//     echo, or the pieces of one), in any ASCII case, as hex and as base64
//     (either alphabet, also inside a longer base64 text), and after
//     undoing JSON escapes, percent-encoding and HTML character references,
//     dropping the markup that html.parse and xml.parse join text across
//     (tags, comments, CDATA delimiters; also inside a JSON string), and
//     reading UTF-16 as bytes. A response is redacted as it arrives, in its
//     header names and values and in its body, before the body is cut (the
//     cut never splits a secret); then every value a builtin returns (what
//     json(), json.decode, html, xml, re, text and dig give, and attempt's
//     error) and every error is redacted again once decoded, so that no
//     decoding joins a secret the response showed only in pieces; and the
//     tool's result and error are redacted on their way to the model.
//     Values shorter than 6 bytes are left alone, and the values of
//     headers that describe a request rather than authorise it (Accept,
//     User-Agent, Content-Type, Cache-Control, If-None-Match and the like)
//     are redacted only whole (runs of them would mangle ordinary text). Pieces shorter than 12 bytes are not secrets
//     on their own: a script that joins such pieces itself (with + or
//     str.replace) holds the secret, though it can neither return it to
//     the model whole nor send it (what a script puts in a request's path,
//     query, body and headers is redacted too). An application that transforms a credential some other
//     way (reversing or encrypting it) is beyond this.
//   - Each call may make at most MaxRequests requests (default 10), run for
//     Timeout (default 20s, covering requests in flight) and take MaxSteps
//     Starlark steps (default 1,000,000). A response body longer than
//     MaxResponseBytes (default 1 MiB) is cut there, with truncated set and
//     a marker appended to body; json() of a cut body is an error. The re,
//     text, html and xml functions charge their work to MaxSteps (a step per
//     16 bytes of input, more for a long pattern), take at most 16 MiB of
//     input and a pattern of at most 4096 bytes; a parsed document may hold
//     500,000 nodes nested at most 512 deep.
//   - Each call (and the file's top level, at load) may allocate at most
//     MaxMemory bytes (default 256 MiB), counted before the value is built:
//     x * n, x + y, x % y, slices, join, replace, format, list, sorted, str,
//     json.encode and json.decode, comprehension elements, response bodies
//     and the call's result. What a call builds and throws away counts too.
//     Past the limit the call ends with an error naming script.MaxMemory;
//     the process and other calls go on.
//   - A script error (a syntax error at load, a runtime error, fail) becomes
//     an error naming the file, line and function; a call that fails after
//     sending a POST, PUT, PATCH or DELETE (or asking for one with a method
//     override) wraps onion.ErrOutcomeUnknown. A panic inside the runtime is
//     recovered and reported as an error.
package script
