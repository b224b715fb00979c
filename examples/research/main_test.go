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
	s := oniontest.NewServer(t,
		// Question 1: search, read the page, answer.
		oniontest.ToolCalls(oniontest.Call("web_search", `{"query":"onion layers"}`)),
		oniontest.ToolCalls(oniontest.Call("web_fetch", `{"url":"`+w.URL+`/onions"}`)),
		oniontest.Text("Eight to fifteen, by size ("+w.URL+"/onions)."),
		// Question 2: a page that does not exist; the model says so.
		oniontest.ToolCalls(oniontest.Call("web_fetch", `{"url":"`+w.URL+`/glossary"}`)),
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
		"> " + questions[0] + "\n",
		`  [web_search {"query":"onion layers"}: succeeded]`,
		`  [web_fetch {"url":"` + w.URL + `/onions"}: succeeded]`,
		"Eight to fifteen, by size (" + w.URL + "/onions).\n(2 rounds of tools, stopped: natural)",
		"> " + questions[1] + "\n",
		`  [web_fetch {"url":"` + w.URL + `/glossary"}: failed] `,
		"the glossary could not be fetched (HTTP 404).\n(1 rounds of tools, stopped: natural)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q\n%s", want, got)
		}
	}

	reqs := s.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	first := reqs[0].Body
	if sys := first.Messages[0]; sys.Role != openai.ChatMessageRoleSystem || !strings.Contains(sys.Content, "never invent facts") {
		t.Errorf("system prompt = %+v", sys)
	}
	var names []string
	for _, tool := range first.Tools {
		names = append(names, tool.Function.Name)
	}
	if strings.Join(names, ",") != "web_search,web_fetch" {
		t.Errorf("tools = %v", names)
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
	if got := toolResult(reqs[2]); !strings.Contains(got, "between eight and fifteen layers") || !strings.Contains(got, "Title: Onions: a field guide") {
		t.Errorf("page sent = %s", got)
	}
	if got := toolResult(reqs[4]); !strings.Contains(got, "404") {
		t.Errorf("the failed fetch was reported as %q, want the 404", got)
	}
	// The follow-up carries the first question and its answer.
	var convo []string
	for _, m := range reqs[3].Body.Messages {
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
