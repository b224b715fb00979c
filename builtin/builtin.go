package builtin

import (
	"fmt"
	"io"
	"strings"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/builtin/internal/toolref"
)

// knownRefs lists the references Tools knows, in the order its errors name them.
var knownRefs = []string{"web_search", "web_fetch", "todo", "memory", "files", "shell", "browser"}

// separateRefs names the references whose tools live in a package of their
// own, which builtin does not import: Tools builds them only in a program
// that imports that package.
var separateRefs = map[string]string{
	"web_fetch": "github.com/onionkit/onion/builtin/webfetch",
	"browser":   "github.com/onionkit/onion/builtin/browser",
}

// Tools returns the built-in tools for the named references, each with its
// defaults, in the order named: the narrowest set that does the job. A
// reference may stand for several tools:
//
//	"web_search"  web_search, with the provider SearchFromEnv finds
//	"web_fetch"   web_fetch
//	"todo"        add, list, complete, remove on a fresh TodoList
//	"memory"      remember, recall, forget, memories on an in-process Memory
//	"files"       read_file, write_file, list_files, glob, grep, delete_file
//	              confined to the current directory
//	"shell"       run_command, asking for approval before every command
//	"browser"     goto, page_text, click, type_text, screenshot, new_tab,
//	              switch_tab, list_tabs, close_tab (Chromium starts on first use)
//
// The browser and web_fetch live in packages of their own, so that a
// program that does not use them does not build Chromium's protocol or an
// HTML parser: "browser" and "web_fetch" work once the program imports
// github.com/onionkit/onion/builtin/browser or .../builtin/webfetch, even
// only for this (import _ "github.com/onionkit/onion/builtin/browser"), and
// are an error saying so otherwise.
//
// A reference named twice counts once; an unknown one is an error naming
// the known ones. For other settings, call the constructors (NewTodoList,
// NewMemory, NewFiles, NewShell, NewWebSearch here; webfetch.NewWebFetch,
// browser.NewBrowser) and pass their results to the agent instead.
func Tools(refs ...string) ([]*onion.Tool, error) {
	var (
		tools   []*onion.Tool
		closers []io.Closer
	)
	seen := map[string]bool{}
	for _, ref := range refs {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		ts, c, err := toolsFor(ref)
		if err != nil {
			// Release what the earlier references opened: an error must
			// not leak an open root directory or a browser.
			for _, c := range closers {
				c.Close()
			}
			return nil, err
		}
		if c != nil {
			closers = append(closers, c)
		}
		tools = append(tools, ts...)
	}
	return tools, nil
}

// toolsFor builds the tools of one reference with their defaults, and
// returns what they hold open, if anything.
func toolsFor(ref string) ([]*onion.Tool, io.Closer, error) {
	var (
		ts     []*onion.Tool
		closer io.Closer
		err    error
	)
	switch ref {
	case "web_search":
		// With no provider configured the tool still exists and, when
		// called, tells the model which environment variables are missing.
		p, _ := SearchFromEnv()
		ts = []*onion.Tool{NewWebSearch(p)}
	case "todo":
		ts, err = onion.ToolsFrom(NewTodoList())
	case "memory":
		var m *Memory
		if m, err = NewMemory(""); err == nil {
			ts, err = onion.ToolsFrom(m)
		}
	case "files":
		var f *Files
		if f, err = NewFiles("."); err == nil {
			closer = f
			ts, err = onion.ToolsFrom(f)
		}
	case "shell":
		ts = []*onion.Tool{NewShell()}
	default:
		pkg, separate := separateRefs[ref]
		if !separate {
			return nil, nil, fmt.Errorf("builtin: unknown tool reference %q: use one of %s", ref, strings.Join(knownRefs, ", "))
		}
		build, ok := toolref.Lookup(ref)
		if !ok {
			return nil, nil, fmt.Errorf("builtin: tool reference %q needs package %s, which this program does not import: add import _ %q", ref, pkg, pkg)
		}
		ts, closer, err = build()
	}
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		return nil, nil, fmt.Errorf("builtin: %s: %w", ref, err)
	}
	return ts, closer, nil
}

// mustTool returns the tool a constructor of this package built from its
// own func: the signature is ours, so an error is a bug, and it panics.
func mustTool(t *onion.Tool, err error) *onion.Tool {
	if err != nil {
		panic("builtin: " + err.Error())
	}
	return t
}
