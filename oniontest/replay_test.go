package oniontest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
	openai "github.com/sashabaranov/go-openai"
)

// The recorded replies of real servers under testdata/fixtures, served
// back by Replay and read by a client, and the copies held to ../shared.

// fixtures lists the recorded response bodies (not the requests).
func fixtures(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"openai", "compat"} {
		all, err := filepath.Glob(filepath.Join("testdata", "fixtures", dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range all {
			if !strings.HasSuffix(f, ".request.json") {
				files = append(files, f)
			}
		}
	}
	if len(files) < 20 {
		t.Fatalf("found %d fixtures under testdata/fixtures, want the openai and compat sets", len(files))
	}
	return files
}

func TestReplayFixtures(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s := oniontest.NewServer(t, oniontest.ReplayFile(t, path))
			wantType := "application/json"
			if strings.HasSuffix(path, ".sse") {
				wantType = "text/event-stream"
			}
			resp, got, err := post(t, s, `{"model":"m","messages":[],"stream":true}`)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != wantType {
				t.Errorf("status %d, Content-Type %q; want 200, %q", resp.StatusCode, resp.Header.Get("Content-Type"), wantType)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("served %d bytes that differ from the %d of %s", len(got), len(want), path)
			}
		})
	}
}

func TestReplayThroughClient(t *testing.T) {
	s := oniontest.NewServer(t,
		oniontest.ReplayFile(t, "testdata/fixtures/openai/chat_stream_parallel_tool_calls.sse"),
		oniontest.ReplayFile(t, "testdata/fixtures/openai/chat_tool_call.json"),
	)
	stream, err := s.Client().CreateChatCompletionStream(context.Background(), chat(true, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	a := assemble(recv(t, stream))
	if len(a.calls) != 2 || a.calls[0].Function.Name != "getCurrentWeather" || a.calls[1].Function.Name != "getCurrentTime" ||
		!json.Valid([]byte(a.calls[0].Function.Arguments)) || !json.Valid([]byte(a.calls[1].Function.Arguments)) {
		t.Errorf("assembled calls = %+v", a.calls)
	}
	resp, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
	if err != nil {
		t.Fatal(err)
	}
	if calls := resp.Choices[0].Message.ToolCalls; len(calls) != 1 || calls[0].ID != "call_olc8qHf1RDItRqwuEBNjsu3B" ||
		calls[0].Function.Arguments != `{"location":"Boston"}` {
		t.Errorf("tool calls = %+v", calls)
	}
}

func TestReplayStatus(t *testing.T) {
	body, err := os.ReadFile("testdata/fixtures/openai/error_404_model_not_found.json")
	if err != nil {
		t.Fatal(err)
	}
	s := oniontest.NewServer(t, oniontest.ReplayStatus(http.StatusNotFound, "application/json", body))
	_, err = s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Errorf("err = %v, want the recorded 404 as *openai.APIError", err)
	}
}

// TestFixtureCopiesMatchShared checks testdata/fixtures against the shared
// store they were copied from, where that store exists (not in CI).
func TestFixtureCopiesMatchShared(t *testing.T) {
	const shared = "../../shared/fixtures"
	if _, err := os.Stat(shared); err != nil {
		t.Skip("no shared fixture store at", shared)
	}
	for _, dir := range []string{"openai", "compat"} {
		orig, err := filepath.Glob(filepath.Join(shared, dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		copies, _ := filepath.Glob(filepath.Join("testdata", "fixtures", dir, "*"))
		if len(orig) != len(copies) {
			t.Errorf("%s: %d files in the store, %d copies", dir, len(orig), len(copies))
		}
		for _, o := range orig {
			want, _ := os.ReadFile(o)
			got, err := os.ReadFile(filepath.Join("testdata", "fixtures", dir, filepath.Base(o)))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: copy differs from the store (%v)", o, err)
			}
		}
	}
	// Of llama.cpp's exchanges only some are copied: each as it is.
	copies, _ := filepath.Glob(filepath.Join("testdata", "fixtures", "llamacpp", "*[0-9]*"))
	replays, _ := filepath.Glob(filepath.Join("testdata", "fixtures", "llamacpp", "replay", "*"))
	if len(copies)+len(replays) < 10 {
		t.Errorf("%d llama.cpp copies, want the cut replies and the replays", len(copies)+len(replays))
	}
	for _, c := range append(copies, replays...) {
		rel, _ := filepath.Rel(filepath.Join("testdata", "fixtures"), c)
		want, err := os.ReadFile(filepath.Join(shared, rel))
		got, _ := os.ReadFile(c)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: copy differs from the store (%v)", c, err)
		}
	}
}
