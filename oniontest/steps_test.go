package oniontest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/onionkit/onion/oniontest"
	openai "github.com/sashabaranov/go-openai"
)

// This file holds the server to the test it serves: running out of
// steps, or a zero Step, fails that test.

// recordingTB captures Errorf; everything else goes to the real test.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func TestOutOfStepsFailsTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	s := oniontest.NewServer(rec)
	_, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || !strings.Contains(apiErr.Message, "no step left") {
		t.Errorf("err = %v, want a 500 *openai.APIError saying no step is left", err)
	}
	if got := rec.errors(); len(got) != 1 || got[0] != "oniontest: unexpected request #1: no step left" {
		t.Errorf("Errorf calls = %q", got)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests recorded, want the unexpected one too", n)
	}

	s.Add(oniontest.Text("added"))
	resp, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
	if err != nil || resp.Choices[0].Message.Content != "added" {
		t.Errorf("after Add: %v, %v; want the added step", resp, err)
	}
	if got := rec.errors(); len(got) != 1 {
		t.Errorf("Errorf calls = %q, want no new one", got)
	}
}

func TestZeroStepFailsTest(t *testing.T) {
	rec := &recordingTB{TB: t}
	s := oniontest.NewServer(rec, oniontest.Func(func(oniontest.Request) oniontest.Step { return oniontest.Step{} }))
	_, err := s.Client().CreateChatCompletion(context.Background(), chat(false, "hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 {
		t.Errorf("err = %v, want a 500 *openai.APIError", err)
	}
	if got := rec.errors(); len(got) != 1 || !strings.Contains(got[0], "zero Step") {
		t.Errorf("Errorf calls = %q", got)
	}
}
