package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/onionkit/onion/builtin"
	"github.com/onionkit/onion/builtin/webfetch"
	"github.com/onionkit/onion/oniontest"
	"github.com/sashabaranov/go-openai"
)

// web serves a fake SearXNG instance and the pages it finds, on loopback.
func web(t *testing.T) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/search", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"results": []map[string]string{{
			"title":   "Onions: a field guide",
			"url":     srv.URL + "/onions",
			"content": "Everything about onion layers.",
		}}})
	})
	mux.HandleFunc("/onions", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><head><title>Onions: a field guide</title></head><body><main><article>
<h1>Onions</h1><p>A common onion has between eight and fifteen layers, depending on its size.</p>
<p>The layers are modified leaves that store food for the plant.</p></article></main></body></html>`)
	})
	srv = httptest.NewServer(mux) // everything else is 404
	t.Cleanup(srv.Close)
	return srv
}

func TestResearch(t *testing.T) {
	w := web(t)
	questions := []string{"How many layers does an onion have?", "And what are the layers, botanically? See the glossary too."}
	// The lead and the reader share one model server: its steps go in the
	// order the two agents ask.
	s := oniontest.NewServer(t,
		// Question 1: the lead searches, hands the page to the reader, which
		// fetches it and reports; the lead answers.
		oniontest.ToolCalls(oniontest.Call("web_search", `{"query":"onion layers"}`)),
		oniontest.ToolCalls(oniontest.Call("reader", `{"task":"How many layers does an onion have? Read `+w.URL+`/onions"}`)),
		oniontest.ToolCalls(oniontest.Call("web_fetch", `{"url":"`+w.URL+`/onions"}`)),
		oniontest.Text("Between eight and fifteen layers, by size ("+w.URL+"/onions)."),
		oniontest.Text("Eight to fifteen, by size ("+w.URL+"/onions)."),
		// Question 2: a page that does not exist; the reader, then the lead, say so.
		oniontest.ToolCalls(oniontest.Call("reader", `{"task":"What are onion layers, botanically? Read `+w.URL+`/glossary"}`)),
		oniontest.ToolCalls(oniontest.Call("web_fetch", `{"url":"`+w.URL+`/glossary"}`)),
		oniontest.Text("The glossary could not be fetched (HTTP 404)."),
		oniontest.Text("They are modified leaves; the glossary could not be fetched (HTTP 404)."),
	)
	t.Setenv("OPENAI_BASE_URL", s.URL())
	t.Setenv("OPENAI_API_KEY", "test")
	cfg := config{
		search: builtin.NewWebSearch(builtin.SearXNG(w.URL)),
		fetch:  webfetch.NewWebFetch(webfetch.AllowAddresses(netip.MustParsePrefix("127.0.0.0/8"))),
	}
	var out bytes.Buffer
	if err := run(context.Background(), strings.NewReader(""), &out, questions, cfg); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"  [reader → web_fetch {\"url\":\"" + w.URL + "/onions\"}: succeeded]\n> " + questions[0] + "\n",
		`  [web_search {"query":"onion layers"}: succeeded]`,
		`  [reader {"task":"How many layers does an onion have? Read ` + w.URL + `/onions"}: succeeded]`,
		"Eight to fifteen, by size (" + w.URL + "/onions).\n(2 rounds of tools, stopped: natural)",
		"  [reader → web_fetch {\"url\":\"" + w.URL + "/glossary\"}: failed fetch " + w.URL + "/glossary: the server answered 404",
		"> " + questions[1] + "\n",
		"the glossary could not be fetched (HTTP 404).\n(1 rounds of tools, stopped: natural)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q\n%s", want, got)
		}
	}

	reqs := s.Requests()
	if len(reqs) != 9 {
		t.Fatalf("%d requests, want 9", len(reqs))
	}
	tools := func(r oniontest.Request) string {
		var names []string
		for _, tool := range r.Body.Tools {
			names = append(names, tool.Function.Name)
		}
		return strings.Join(names, ",")
	}
	lead, reader := reqs[0].Body, reqs[2].Body
	if sys := lead.Messages[0]; sys.Role != openai.ChatMessageRoleSystem || !strings.Contains(sys.Content, "never invent facts") || tools(reqs[0]) != "web_search,reader" {
		t.Errorf("the lead's first request: system %q, tools %s", sys.Content, tools(reqs[0]))
	}
	// The reader sees its own prompt, its own tool and the task alone.
	if sys := reader.Messages[0]; !strings.Contains(sys.Content, "You read the web pages") || tools(reqs[2]) != "web_fetch" || len(reader.Messages) != 2 ||
		reader.Messages[1].Content != "How many layers does an onion have? Read "+w.URL+"/onions" {
		t.Errorf("the reader's first request: %+v, tools %s", reader.Messages, tools(reqs[2]))
	}
	toolResult := func(r oniontest.Request) string {
		m := r.Body.Messages[len(r.Body.Messages)-1]
		if m.Role != openai.ChatMessageRoleTool {
			t.Fatalf("last message is %s, want a tool result", m.Role)
		}
		return m.Content
	}
	if got := toolResult(reqs[1]); !strings.Contains(got, `"url":"`+w.URL+`/onions"`) || !strings.Contains(got, "Everything about onion layers.") {
		t.Errorf("search result sent = %s", got)
	}
	if got := toolResult(reqs[3]); !strings.Contains(got, "between eight and fifteen layers") || !strings.Contains(got, "Title: Onions: a field guide") {
		t.Errorf("page sent to the reader = %s", got)
	}
	if got := toolResult(reqs[4]); got != "Between eight and fifteen layers, by size ("+w.URL+"/onions)." {
		t.Errorf("the lead read %q from the reader", got)
	}
	if got := toolResult(reqs[7]); !strings.Contains(got, "404") {
		t.Errorf("the failed fetch was reported as %q, want the 404", got)
	}
	// The follow-up carries the first question and its answer.
	var convo []string
	for _, m := range reqs[5].Body.Messages {
		if m.Role == openai.ChatMessageRoleUser || m.Role == openai.ChatMessageRoleAssistant {
			convo = append(convo, m.Content)
		}
	}
	if len(convo) != 3 || convo[0] != questions[0] || !strings.HasPrefix(convo[1], "Eight to fifteen") || convo[2] != questions[1] {
		t.Errorf("follow-up sent the conversation %q", convo)
	}
}

func TestResearchCap(t *testing.T) {
	// A model that never stops searching is cut after four rounds and asked
	// to answer without tools.
	w := web(t)
	var steps []oniontest.Step
	for range 4 {
		steps = append(steps, oniontest.ToolCalls(oniontest.Call("web_search", `{"query":"onions"}`)))
	}
	steps = append(steps, oniontest.Text("From the searches so far: onions have layers."))
	s := oniontest.NewServer(t, steps...)
	t.Setenv("OPENAI_BASE_URL", s.URL())
	t.Setenv("OPENAI_API_KEY", "test")
	cfg := config{
		search: builtin.NewWebSearch(builtin.SearXNG(w.URL)),
		fetch:  webfetch.NewWebFetch(webfetch.AllowAddresses(netip.MustParsePrefix("127.0.0.0/8"))),
	}
	var out bytes.Buffer
	if err := run(context.Background(), nil, &out, []string{"Tell me about onions."}, cfg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "(4 rounds of tools, stopped: max_iterations)") {
		t.Errorf("output:\n%s", out.String())
	}
	reqs := s.Requests()
	if len(reqs) != 5 || len(reqs[4].Body.Tools) != 0 {
		t.Errorf("%d requests; the last offered %d tools, want 5 and 0", len(reqs), len(reqs[len(reqs)-1].Body.Tools))
	}
}
