package gemini_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onionkit/onion/gemini"
	"github.com/onionkit/onion/loop"
)

// FuzzReply feeds hostile bytes to the model as the body of a reply,
// streamed and not: it must not panic, must return, and what it makes of
// them (text, calls, errors) is bounded by what came.
func FuzzReply(f *testing.F) {
	for _, seed := range []string{
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}]}\r\n\r\n",
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"name\":\"f\",\"args\":{\"a\":1e400}},\"thoughtSignature\":\"!!\"}]}}]}\n\n",
		"data: {\"error\":{\"code\":429,\"status\":\"RESOURCE_EXHAUSTED\",\"details\":[{\"@type\":\"type.googleapis.com/google.rpc.RetryInfo\",\"retryDelay\":\"1e308s\"}]}}\r\n\r\n",
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"a\",\"thought\":true},{\"text\":\"\",\"thoughtSignature\":\"c2ln\"}]},\"finishReason\":\"MAX_TOKENS\"}],\"usageMetadata\":{\"promptTokenCount\":2147483647}}\r\n\r\n",
		"event: x\ndata: [DONE]\n\n",
		"data: {\"candidates\":[null,{}],\"promptFeedback\":{\"blockReason\":\"SAFETY\"}}\n\n",
		"data: " + strings.Repeat("[", 10000) + "\n\n",
		"{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"whole\"}]},\"finishReason\":\"STOP\"}]}",
		"",
	} {
		f.Add([]byte(seed), true)
		f.Add([]byte(seed), false)
	}
	var mu sync.Mutex
	var body []byte
	var stream bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		b, s := body, stream
		mu.Unlock()
		if s {
			w.Header().Set("Content-Type", "text/event-stream")
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	log.SetOutput(io.Discard) // genai logs what it cannot read
	defer log.SetOutput(os.Stderr)
	model, err := gemini.New("gemini-2.5-flash", gemini.BaseURL(srv.URL), gemini.APIKey(testKey))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte, s bool) {
		mu.Lock()
		body, stream = b, s
		mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		var streamed int
		var onDelta func(loop.Delta)
		if s {
			onDelta = func(d loop.Delta) { streamed += len(d.Text) + len(d.Reasoning) }
		}
		resp, err := model.Generate(ctx, &loop.Request{Messages: []loop.Message{{Role: loop.RoleUser, Content: "hi"}}}, onDelta)
		if ctx.Err() != nil {
			t.Fatalf("Generate did not return in time")
		}
		if err != nil {
			if len(err.Error()) > 2500 {
				t.Errorf("an error of %d bytes", len(err.Error()))
			}
			return
		}
		got := len(resp.Message.Content) + len(resp.Message.Reasoning)
		for _, c := range resp.Message.ToolCalls {
			got += len(c.Name)
		}
		if got > len(b) || streamed > len(b) {
			t.Errorf("%d bytes of reply from %d bytes", got, len(b))
		}
	})
}
