// Command onion runs onion agents and their tools from the terminal: it
// shows the tools as a model sees them, calls one directly, runs the agent
// on a prompt or in a chat, and serves the tools to MCP hosts.
//
//	go install github.com/onionkit/onion/cmd/onion@latest
//	onion tools -tools todo,files
//
// The commands:
//
//	onion tools [sources] [-json]            every tool: name, intent, approval, JSON Schema
//	onion call  [sources] TOOL '{"a":1}'     run one tool exactly as Tool.Call runs it
//	onion run   [sources] [model] PROMPT     run the agent; the answer streams to stdout
//	onion chat  [sources] [model]            the same in a loop: /tools /history /reset /save FILE
//	onion serve [sources] [-http ADDR]       serve the tools over MCP (stdio, or HTTP at /mcp)
//	onion dev   [sources] [model]            a page in the browser: chat, timeline, approvals, tools, replay
//
// Every command takes -h. Flags go before the arguments, as Go's flag
// package reads them: it stops at the first argument that is not a flag.
// So that "onion run hi -json" does not send "hi -json" as the prompt,
// run and call refuse an argument after the first one that names one of
// their flags, and show the command line that was meant; a word that
// starts with a dash but names no flag ("what does -race do?") stays an
// argument, and after -- every argument does (onion run -- explain -json).
//
// The sources of tools, which may be combined:
//
//	-tools todo,files,…     built-in tools (todo, files, memory, shell, web_search,
//	                        web_fetch, browser; files is confined to the current directory)
//	-mcp 'command args…'    an MCP server to start (repeatable)
//	-script file.star       Starlark tools (repeatable), with -script-url and -script-header
//
// and -C DIR works in DIR: the files tools are confined to it, the shell
// and MCP servers run there. Each tool call, in every command, is cut off
// after -tool-timeout (default 5m, onion.DefaultToolTimeout; 0 for no
// limit).
//
// The model comes from OPENAI_API_KEY, OPENAI_BASE_URL and ONION_MODEL, or
// from -model and -base-url; -responses speaks the Responses API. A base
// URL needs no key (Ollama, vLLM, an oniontest server), so no key is
// asked for then. With neither a key nor a base URL, run and chat say what
// to set and exit 2.
//
// tools shows approval as "required" or "none": for a tool that decides per
// call (onion.ApproveIf, as run_command does with ReadOnlyCommands), the
// answer for a call with no arguments.
//
// run and chat write only the answer to stdout. On stderr each tool call
// shows as it starts and as it finishes (its name, its arguments in short,
// its outcome and how long it took), with a spinner while the model thinks
// when stderr is a terminal. A call that needs approval is asked about at
// the terminal (y/N), showing the whole of its arguments, with control
// characters, escape sequences and invisible or reordering runes written
// as escapes; arguments too long to show (over 32 KiB) are denied, not
// asked about. When stdin is not a terminal nobody can answer, so the call
// is denied unless -approve names its tool. -session FILE loads the
// conversation from FILE and saves it there after each turn, so the next
// run continues it; FILE must be a regular file of at most 16 MiB holding
// a history a run could have kept (no system message, every tool result
// answering a call), or exit 1 says what is wrong with it; -json prints the run's Result as JSON instead of the
// answer. Ctrl-C cancels the run cleanly: a write cut in flight ends
// outcome_unknown, as the loop says, and onion exits 130.
//
// serve answers on stdin and stdout by default, or over streamable HTTP at
// http://ADDR/mcp with -http ADDR; a call that needs approval asks the
// host's user through MCP elicitation and does not run without a yes.
// The HTTP endpoint has no authentication, and whoever calls a tool is
// also the user asked to approve it, so -http takes only a loopback
// address (127.0.0.1:8080, [::1]:8080, localhost:8080): an address other
// hosts can reach, such as :8080 or 0.0.0.0:8080, is refused (exit 2)
// unless -http-public says that is meant.
//
// dev serves a page at http://localhost:7700/ (-http ADDR, a loopback
// address unless -http-public, as for serve) to chat with the agent in a
// browser: several conversations, each saved and loaded as the file
// -session reads; each run's model requests (tokens, latency, stop
// reason, the JSON sent and received) and tool calls (arguments,
// approval, outcome, the output the model read) as they happen; Approve
// and Deny for a call that needs approval, which waits for the click
// (-approve names tools allowed ahead); a form for each tool, which calls
// it as call does; the tokens by run and by model, priced with -price
// MODEL=IN,OUT (dollars per million tokens); and an oniontest recording
// stepped through. Ctrl-C stops it. See package devui.
//
// Exit status:
//
//	0    success
//	1    failure (the model's, a source's, a session file's)
//	2    a usage mistake, or no model configured
//	3    call: the arguments do not fit the tool's schema
//	4    call: the tool failed
//	5    call: the call needs approval and was denied
//	130  interrupted (Ctrl-C or SIGTERM)
package main
