package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/onionkit/onion"
)

func toolsCommand() *command {
	var src sources
	var asJSON bool
	c := &command{
		name:    "tools",
		args:    "",
		summary: "print every tool as the model sees it: name, intent, approval, JSON Schema",
		flags: func(fs *flag.FlagSet) {
			src.register(fs)
			fs.BoolVar(&asJSON, "json", false, "print a JSON array, one object per tool, for programs")
		},
	}
	c.run = func(ctx context.Context, fs *flag.FlagSet) int {
		if fs.NArg() > 0 {
			return fail(c.name, usageError{fmt.Errorf("unexpected arguments %q", fs.Args())})
		}
		if src.empty() {
			return fail(c.name, errNoTools)
		}
		agent, err := src.load(ctx)
		if err != nil {
			return fail(c.name, err)
		}
		defer agent.Close()
		descs := describe(ctx, agent.Tools(), src.serverApproves)
		if asJSON {
			b, err := json.MarshalIndent(descs, "", "  ")
			if err != nil {
				return fail(c.name, err)
			}
			fmt.Printf("%s\n", b)
			return exitOK
		}
		writeTools(os.Stdout, descs)
		if os.Getenv("OPENAI_BASE_URL") == "" && os.Getenv("OPENAI_API_KEY") == "" {
			// The next step, on stderr: stdout stays the list.
			fmt.Fprintf(os.Stderr, "\nNext: put these tools in front of a model with onion run %s \"your prompt\".\n"+
				"Connect one first: OPENAI_API_KEY for OpenAI, or OPENAI_BASE_URL for a local OpenAI-compatible\n"+
				"server (llama.cpp's llama-server, Ollama, vLLM), e.g. OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=llama3.2\n",
				src.flagsText())
		}
		return exitOK
	}
	return c
}

// errNoTools is the mistake of a command that needs tools given none.
var errNoTools = usageError{fmt.Errorf("no tools: choose some with -tools (such as -tools todo,files), -mcp or -script")}

// toolDesc is a tool as the model sees it, and as tools -json prints it.
type toolDesc struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Intent      onion.Intent    `json:"intent"`
	Idempotent  bool            `json:"idempotent"`
	Approval    string          `json:"approval"` // "required", "by the server" or "none"
	Signature   string          `json:"signature"`
	Parameters  json.RawMessage `json:"parameters"` // the JSON Schema sent to the model
}

// describe lists the tools of ts, in their order, with exactly the
// description and schema the model is sent. serverApproves tells the
// tools of an MCP server that asks its own user before they run.
func describe(ctx context.Context, ts *onion.Toolset, serverApproves func(name string) bool) []toolDesc {
	descs := make([]toolDesc, 0, ts.Len())
	for _, t := range ts.All() {
		def := t.Definition()
		params, err := json.Marshal(def.Function.Parameters)
		if err != nil {
			params = t.Schema()
		}
		// Approval depends on the call for an ApproveIf tool: this is the
		// answer for a call with no arguments.
		approval := "none"
		switch {
		case t.NeedsApproval(ctx, onion.Call{Name: t.Name(), Intent: t.Intent(), Arguments: json.RawMessage("{}")}):
			approval = "required"
		case serverApproves(t.Name()):
			approval = "by the server"
		}
		descs = append(descs, toolDesc{
			Name:        def.Function.Name,
			Description: def.Function.Description,
			Intent:      t.Intent(),
			Idempotent:  t.Idempotent(),
			Approval:    approval,
			Signature:   t.Signature(),
			Parameters:  params,
		})
	}
	return descs
}

// writeTools prints descs for people: a heading line per tool, then its
// description and its schema, indented.
func writeTools(w io.Writer, descs []toolDesc) {
	for i, d := range descs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		flags := []string{string(d.Intent)}
		if d.Idempotent {
			flags = append(flags, "idempotent")
		}
		flags = append(flags, "approval "+d.Approval)
		fmt.Fprintf(w, "%s  (%s)\n", d.Name, strings.Join(flags, ", "))
		fmt.Fprintf(w, "  %s\n", d.Signature)
		for _, line := range strings.Split(strings.TrimSpace(d.Description), "\n") {
			fmt.Fprintf(w, "  %s\n", line)
		}
		var schema bytes.Buffer
		if json.Indent(&schema, d.Parameters, "  ", "  ") != nil {
			schema.Reset()
			schema.Write(d.Parameters)
		}
		fmt.Fprintf(w, "  %s\n", schema.String())
	}
}
