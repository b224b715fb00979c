package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpclient"
	"github.com/onionkit/onion/mcp/mcpserver"
	"github.com/onionkit/onion/oniontest"
)

// startJob is a write that signals started and runs until its call ends
// or stop is closed.
func startJob(started chan<- struct{}, stop <-chan struct{}) *onion.Tool {
	tool, err := onion.NewTool(func(ctx context.Context, in struct {
		Job string `json:"job"`
	}) error {
		close(started)
		select {
		case <-ctx.Done():
		case <-stop:
		}
		return errors.New("stopped")
	}, onion.Name("start_job"), onion.Description("Start a job."))
	if err != nil {
		panic(err)
	}
	return tool
}

// streamingJob is an SDK server whose start_job tool, a write, sends a
// progress notification (so that its answer's event stream has begun),
// signals started and runs until its call ends or stop is closed.
func streamingJob(started chan<- struct{}, stop <-chan struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "streaming", Version: "v1"}, nil)
	var once sync.Once
	s.AddTool(&mcp.Tool{Name: "start_job", Description: "Start a job.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "job", Message: "started", Progress: 1})
			once.Do(func() { close(started) })
			select {
			case <-ctx.Done():
			case <-stop:
			}
			return nil, errors.New("stopped")
		})
	return s
}

// TestHTTPServerDiesMidCall stops a streamable HTTP server while a write
// runs in it, before and after its answer's stream began: the call ends
// promptly, outcome unknown, in one plain sentence naming the server,
// without the transport's internals.
func TestHTTPServerDiesMidCall(t *testing.T) {
	t.Run("BeforeTheStream", func(t *testing.T) {
		started, stop := make(chan struct{}), make(chan struct{})
		s, err := mcpserver.New(startJob(started, stop))
		if err != nil {
			t.Fatal(err)
		}
		diesMidCall(t, s, nil, started, stop)
	})
	t.Run("DuringTheStream", func(t *testing.T) {
		started, stop := make(chan struct{}), make(chan struct{})
		diesMidCall(t, streamingJob(started, stop), nil, started, stop)
	})
	t.Run("ResumableStream", func(t *testing.T) {
		// With an event store the stream could be resumed, which the SDK's
		// client tries, by default for many seconds.
		started, stop := make(chan struct{}), make(chan struct{})
		diesMidCall(t, streamingJob(started, stop), &mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil)}, started, stop)
	})
}

// diesMidCall serves s over streamable HTTP, calls start_job through an
// agent and stops the HTTP server once the job has started.
func diesMidCall(t *testing.T, s *mcp.Server, opts *mcp.StreamableHTTPOptions, started, stop chan struct{}) {
	t.Helper()
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts))
	// The sessions outlive the cut connections: end them with the test.
	defer func() {
		for ss := range s.Sessions() {
			ss.Close()
		}
	}()
	defer hs.Close()
	defer close(stop)
	srv, err := mcpclient.ConnectHTTP(context.Background(), hs.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	model := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("start_job", `{"job":"backup"}`)),
		oniontest.Text("I could not tell whether the job started."),
	)
	agent, err := onion.NewAgent("http-killed", srv.Tools, onion.BaseURL(model.URL()), onion.APIKey("test-key"))
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	go func() {
		<-started
		// The server goes away: no new connections, and the open ones cut.
		hs.Listener.Close()
		hs.CloseClientConnections()
	}()
	begin := time.Now()
	res, err := agent.Run(context.Background(), "start the backup")
	t.Logf("the call ended %v after it began", time.Since(begin))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Outcome != onion.OutcomeUnknown {
		t.Fatalf("tool calls = %+v, want one outcome_unknown", res.ToolCalls)
	}
	msg := res.ToolCalls[0].Error
	t.Log(msg)
	if !strings.Contains(msg, srv.Name) || strings.Count(msg, ".") > strings.Count(srv.Name, ".")+1 {
		t.Errorf("error %q; want one plain sentence naming %s", msg, srv.Name)
	}
	for _, internal := range []string{"SSE", "reconnect", "attempts", "calling", "EOF"} {
		if strings.Contains(msg, internal) {
			t.Errorf("error %q shows the model the transport's internals (%s)", msg, internal)
		}
	}
}
