// Scripttools gives an agent tools written in Starlark: tickets.star holds
// four small connectors to a ticket tracker (read a ticket, search, comment,
// delete), and script.Parse turns them into onion tools that run sandboxed:
// requests reach only the tracker, a read tool cannot POST, the tracker's
// token is added by Go and never seen by the script, and each call is
// limited in requests, time and steps.
//
// With TICKETS_URL unset the program starts a small in-memory tracker on the
// loopback interface, so only a model is needed:
//
//	OPENAI_API_KEY=sk-... go run ./examples/scripttools "What is ticket 42 about?"
//	OPENAI_BASE_URL=http://localhost:11434/v1 ONION_MODEL=llama3.2 go run ./examples/scripttools
//	TICKETS_URL=https://tickets.example.com TICKETS_TOKEN=... go run ./examples/scripttools
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/script"
)

//go:embed tickets.star
var ticketsStar string

const defaultPrompt = "What is ticket 42 about? Tell the customer we are on it."

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Getenv("TICKETS_URL"), os.Getenv("TICKETS_TOKEN")); err != nil {
		fmt.Fprintln(os.Stderr, "scripttools:", err)
		os.Exit(1)
	}
}

// run is the program, with its arguments, terminal and tracker passed in so
// that a test can run it against oniontest and an httptest tracker. With
// trackerURL empty it serves the demo tracker.
func run(ctx context.Context, args []string, in io.Reader, out io.Writer, trackerURL, token string) error {
	if os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "" {
		return errors.New("no model: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server such as http://localhost:11434/v1")
	}
	if trackerURL == "" {
		token = "demo-token"
		url, stop, err := serveDemo(newTracker(token))
		if err != nil {
			return err
		}
		defer stop()
		trackerURL = url
	}

	// snippet:parse
	// The token goes in through Go: the scripts never see it.
	tools, err := script.Parse("tickets.star", ticketsStar,
		script.BaseURL(trackerURL),
		script.Header("Authorization", "Bearer "+token))
	// end snippet:parse
	if err != nil {
		return err
	}
	agent, err := onion.NewAgent("support", tools,
		onion.Approver(onion.TerminalApprover(in, out)),
		onion.SystemPrompt("You help the support team with tickets."))
	if err != nil {
		return err
	}
	defer agent.Close()

	prompt := defaultPrompt
	if len(args) > 0 {
		prompt = strings.Join(args, " ")
	}
	fmt.Fprintf(out, "> %s\n", prompt)
	res, err := agent.Run(ctx, prompt)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, res.Output)
	for _, c := range res.ToolCalls {
		fmt.Fprintf(out, "call %s(%s): %s\n", c.Name, c.Arguments, c.Outcome)
	}
	return nil
}

// serveDemo serves h on a loopback port until stop is called.
func serveDemo(h http.Handler) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("start the demo tracker: %w", err)
	}
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	return "http://" + ln.Addr().String(), func() { srv.Close(); <-done }, nil
}

// ticket is one ticket of the demo tracker.
type ticket struct {
	ID       string   `json:"id"`
	Title    string   `json:"title"`
	Text     string   `json:"text"`
	Comments []string `json:"comments"`
}

// tracker is the demo ticket tracker: a small JSON API behind a bearer token.
type tracker struct {
	token   string
	mu      sync.Mutex // guards tickets
	tickets map[string]*ticket
}

func newTracker(token string) *tracker {
	return &tracker{token: token, tickets: map[string]*ticket{
		"42": {ID: "42", Title: "Printer on fire", Text: "The printer on floor 3 is on fire again. Please send someone."},
		"43": {ID: "43", Title: "VPN drops", Text: "The VPN drops every hour since Monday."},
	}}
}

func (tr *tracker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+tr.token {
		http.Error(w, "missing or wrong token", http.StatusUnauthorized)
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	id, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/api/tickets/"), "/")
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/api/tickets":
		q := strings.ToLower(r.URL.Query().Get("q"))
		found := []*ticket{}
		for _, t := range tr.tickets {
			if strings.Contains(strings.ToLower(t.Title+" "+t.Text), q) {
				found = append(found, t)
			}
		}
		slices.SortFunc(found, func(a, b *ticket) int { return strings.Compare(a.ID, b.ID) })
		writeJSON(w, found)
	case tr.tickets[id] == nil:
		http.Error(w, "no such ticket", http.StatusNotFound)
	case r.Method == http.MethodGet && rest == "":
		t := tr.tickets[id]
		var body strings.Builder
		fmt.Fprintf(&body, "%s\n\n%s\n", t.Title, t.Text)
		for _, c := range t.Comments {
			fmt.Fprintf(&body, "\ncomment: %s\n", c)
		}
		writeJSON(w, map[string]any{"id": t.ID, "title": t.Title, "body": body.String()})
	case r.Method == http.MethodPost && rest == "comments":
		var c struct{ Text string }
		if err := json.NewDecoder(r.Body).Decode(&c); err != nil || c.Text == "" {
			http.Error(w, `want {"text": "..."}`, http.StatusBadRequest)
			return
		}
		t := tr.tickets[id]
		t.Comments = append(t.Comments, c.Text)
		writeJSON(w, map[string]any{"id": len(t.Comments)})
	case r.Method == http.MethodDelete && rest == "":
		delete(tr.tickets, id)
		w.WriteHeader(http.StatusNoContent)
	default:
		http.Error(w, "not here", http.StatusMethodNotAllowed)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
