package script_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/script"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const token = "Bearer s3cret-token-123"

// app is the application scripts talk to. It checks the credentials and
// records what reached it.
type app struct {
	*httptest.Server
	mu   sync.Mutex // guards hits
	hits []hit
}

type hit struct {
	Method, Path, RawQuery, Auth, Body string
}

func newApp(t *testing.T) *app {
	t.Helper()
	a := &app{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/tickets/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "42" {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		io.WriteString(w, "The printer on floor 3 is on fire.")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
		json.NewEncoder(w).Encode(map[string]any{
			"method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery,
			"headers": r.Header, "body": string(body),
		})
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("é", 1000))
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the database is down", http.StatusServiceUnavailable)
	})
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		a.mu.Lock()
		a.hits = append(a.hits, hit{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), string(body)})
		a.mu.Unlock()
		if r.Header.Get("Authorization") != token {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *app) seen() []hit {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]hit(nil), a.hits...)
}

// parse loads src against the app with the credentials, failing the test on
// an error.
func (a *app) parse(t *testing.T, src string, opts ...script.Option) map[string]*onion.Tool {
	t.Helper()
	opts = append([]script.Option{script.BaseURL(a.URL), script.Header("Authorization", token)}, opts...)
	tools, err := script.Parse("test.star", src, opts...)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	m := map[string]*onion.Tool{}
	for _, tl := range tools {
		m[tl.Name()] = tl
	}
	return m
}

// call calls the tool named name as the model would.
func call(t *testing.T, tools map[string]*onion.Tool, name, args string) (string, error) {
	t.Helper()
	tl, ok := tools[name]
	if !ok {
		t.Fatalf("no tool %q", name)
	}
	return tl.Call(context.Background(), args)
}

// mustCall is call for calls that must succeed.
func mustCall(t *testing.T, tools map[string]*onion.Tool, name, args string) string {
	t.Helper()
	out, err := call(t, tools, name, args)
	if err != nil {
		t.Fatalf("%s(%s): %v", name, args, err)
	}
	return out
}

const ticketsStar = `
def ticket_text(ticket_id):
    """The readable text of a ticket.

    ticket_id: the ticket's id

    onion:intent read
    """
    answer = request("GET", "/api/tickets/" + ticket_id)
    if answer.status == 404:
        fail("no such ticket")
    return {"text": ok(answer)}
`

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
