package oniontest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
	openai "github.com/sashabaranov/go-openai"
)

// recordingExample is the recording the package doc shows, between its
// marker lines.
const recordingExample = `
// snippet:recording
{
  "format": "oniontest/recording/1",
  "volatile": ["user"],
  "exchanges": [
    {
      "request": {
        "method": "POST",
        "path": "/v1/chat/completions",
        "json": {
          "model": "gpt-4.1",
          "messages": [{"role": "user", "content": "Hi"}],
          "stream": false,
          "user": "u-1",
          "metadata": {"trace": "t-1"}
        },
        "volatile": ["metadata.trace"]
      },
      "response": {
        "status": 200,
        "header": {"Content-Type": "application/json"},
        "body": "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello!\"},\"finish_reason\":\"stop\"}]}\n"
      }
    },
    {
      "request": {
        "method": "POST",
        "path": "/v1/chat/completions",
        "json": {
          "model": "gpt-4.1",
          "messages": [{"role": "user", "content": "Bye"}],
          "stream": true,
          "user": "u-1"
        }
      },
      "response": {
        "status": 200,
        "header": {"Content-Type": "text/event-stream"},
        "events": [
          "data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Bye!\"},\"finish_reason\":\"stop\"}]}\n\n",
          "data: [DONE]\n\n"
        ]
      }
    }
  ]
}
// end snippet:recording
`

// TestRecordingExample: the recording the package doc shows plays back:
// its first reply to a request whose volatile fields differ, its second,
// a stream, to a request that must match but for the top-level volatile
// user.
func TestRecordingExample(t *testing.T) {
	doc := strings.TrimSuffix(strings.TrimPrefix(recordingExample, "\n// snippet:recording\n"), "// end snippet:recording\n")
	file := filepath.Join(t.TempDir(), "example.json")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	s := oniontest.Playback(t, file)
	client := s.Client()
	resp, err := client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "gpt-4.1",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Hi"}},
		User:     "u-2",
		Metadata: map[string]string{"trace": "t-2"},
	})
	if err != nil || resp.Choices[0].Message.Content != "Hello!" {
		t.Fatalf("the first exchange: %+v, %v", resp, err)
	}
	stream, err := client.CreateChatCompletionStream(context.Background(), openai.ChatCompletionRequest{
		Model:    "gpt-4.1",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "Bye"}},
		Stream:   true,
		User:     "u-3",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := recv(t, stream); len(got) != 1 || got[0].Choices[0].Delta.Content != "Bye!" {
		t.Errorf("the second exchange: %+v", got)
	}
}
