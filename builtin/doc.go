// Package builtin holds the tools that come with onion: a todo list, a
// memory, a confined directory of files, a shell and web search here, and
// web fetch and a headless browser in packages of their own
// (github.com/onionkit/onion/builtin/webfetch and .../builtin/browser),
// whose heavy dependencies a program builds only if it imports them. Each
// is an ordinary onion tool source — a struct whose documented methods are
// the tools, or a func wrapped with onion.NewTool —
// so besides being useful they show how tools are written: the first
// paragraph of a method's doc comment is what the model reads, a paragraph
// of "name: text" lines describes the parameters, and //onion: directive
// lines set the intent.
//
// # Choosing tools
//
// Tools returns a ready set by name, with defaults:
//
//	tools, err := builtin.Tools("todo", "files")
//	if err != nil {
//		log.Fatal(err)
//	}
//	agent, err := onion.NewAgent("helper", tools)
//
// For other settings, call a constructor and give the result to
// onion.NewAgent (or to onion.ToolsFrom):
//
//	files, err := builtin.NewFiles("./workspace", builtin.MaxFileBytes(1<<20))
//	if err != nil {
//		log.Fatal(err)
//	}
//	shell := builtin.NewShell(builtin.ShellDir("./workspace"), builtin.ReadOnlyCommands("ls", "wc"))
//	mem, err := builtin.NewMemory("memory.json")
//	if err != nil {
//		log.Fatal(err)
//	}
//	agent, err := onion.NewAgent("helper", files, shell, mem)
//
// Give a model only the tools its job needs: each one is more text in every
// request and one more thing it can get wrong.
//
// # The tools
//
// Every tool name is unique across the packages, so any references can be
// combined. The intent (read, write or delete) decides how the agent
// schedules a call: reads of one response run in parallel, the others one
// after another in order. A tool is a read only if no later call can
// observe that it ran, so goto and the tab tools are writes: they change
// what the next browser call acts on. run_command also asks the agent's
// approver before every command unless ReadOnlyCommands lets it through.
//
//	reference   tool         intent  limits
//	todo        add          write   text up to 500 bytes; at most 1000 tasks
//	todo        list         read    -
//	todo        complete     write   idempotent
//	todo        remove       delete  -
//	memory      remember     write   key up to 200 bytes, value up to 4 KiB, at most 1000 keys; idempotent
//	memory      recall       read    -
//	memory      forget       delete  -
//	memory      memories     read    returns every key with its value
//	files       read_file    read    regular text files only, up to MaxFileBytes (256 KiB)
//	files       write_file   write   up to MaxFileBytes; atomic; idempotent
//	files       list_files   read    up to MaxFileResults (200) entries
//	files       glob         read    up to MaxFileResults matches; .git skipped unless named; stops when the call ends or after 100,000 entries; leaves out directories over 10,000 deep (256 where each level branches)
//	files       grep         read    RE2; up to MaxFileResults lines of 240 bytes; skips binary, oversize and .git; stops when the call ends, after 100,000 entries or 64 MiB read; leaves out directories as glob does
//	files       delete_file  delete  files and empty directories only
//	shell       run_command  write   approval; nothing it starts outlives the call; ShellTimeout (30 s); ShellMaxOutput (64 KiB); an allow-listed environment
//	web_search  web_search   read    5 results (at most 20); needs SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY
//	web_fetch   web_fetch    read    public http(s) only; MaxBodyBytes (2 MiB); FetchTimeout (20 s); 5 redirects
//	browser     goto         write   public addresses only; BrowserTimeout (30 s) per call
//	browser     page_text    read    20,000 characters
//	browser     click        write   -
//	browser     type_text    write   -
//	browser     screenshot   write   writes a PNG under BrowserScreenshotDir only; the model is shown it
//	browser     new_tab      write   -
//	browser     switch_tab   write   -
//	browser     list_tabs    read    -
//	browser     close_tab    write   -
//
// # Safety
//
// The files tools use an os.Root: a path that is absolute, climbs above the
// root with .., or passes through a symbolic link pointing outside it is
// refused, and writes go to a temporary file in the same directory that is
// then renamed, so a file is never seen half-written. Memory writes its file
// the same way, under a lock that lets several Memory values and processes
// share it without losing each other's keys, and refuses to open a file it
// cannot parse, or that breaks its limits, rather than start empty and
// overwrite it. run_command runs each command in a PID namespace of its own
// where Linux allows one, so that when the command finishes or times out
// the kernel kills everything it started, setsid or not (elsewhere, in a
// process group of its own, killed as a whole), with a /proc of that
// namespace it has no capability to take away, even as root, and with only
// the environment variables an allow-list names. web_fetch and the
// browser reach only public internet addresses unless told otherwise
// (webfetch.AllowAddresses, browser.BrowserAllowAddresses).
//
// TodoList, Memory, Files and browser.Browser are safe for concurrent use;
// Files and Browser hold resources that Close releases, which an agent does
// when it is closed.
package builtin

// The facts onion reads from this package's doc comments are also compiled
// in, so that the tools keep their descriptions and parameter names in
// binaries built with -trimpath or run far from the module cache.
//go:generate go run github.com/onionkit/onion/cmd/oniondoc
