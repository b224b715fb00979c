package onion_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// FuzzModelReply serves arbitrary bytes as the endpoint's reply, streamed
// and not, through the real client and the loop: every run ends with an
// answer or an error, never a panic or a hang.
func FuzzModelReply(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("oniontest", "testdata", "fixtures", "*", "*"))
	for _, file := range files {
		if filepath.Ext(file) != ".sse" && filepath.Ext(file) != ".json" {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, filepath.Ext(file) == ".sse")
	}
	f.Add([]byte("data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":99999999999,\"function\":{\"arguments\":\"{\"}}]}}]}\n\n"), true)
	f.Add([]byte(`{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"","type":"function","function":{"name":"","arguments":"\u0000"}}]}}]}`), false)
	f.Fuzz(func(t *testing.T, body []byte, stream bool) {
		contentType := "application/json"
		if stream {
			contentType = "text/event-stream"
		}
		// The first reply is the fuzzed one; the loop may ask again once.
		s := oniontest.NewServer(t, oniontest.Replay(contentType, body), oniontest.Text("done"))
		a, err := onion.NewAgent("fuzz", Lookup, onion.BaseURL(s.URL()), onion.APIKey("k"),
			onion.Retries(0), onion.MaxIterations(1))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if stream {
			for _, err := range a.Stream(ctx, "go") {
				_ = err
			}
			return
		}
		_, _ = a.Run(ctx, "go")
	})
}
