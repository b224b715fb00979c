package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// syncBuffer is an output written by the program and its fires at once.
type syncBuffer struct {
	mu sync.Mutex // guards b
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func noModel(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
}

// TestApprovedThenFires approves the weekly check, then lets the bubble's
// fake clock run to the first Monday at 9:00 in Paris: the automation
// fires and its run's answer is printed.
func TestApprovedThenFires(t *testing.T) {
	noModel(t)
	store := filepath.Join(t.TempDir(), "automations.json")
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		out := &syncBuffer{}
		done := make(chan error)
		go func() { done <- run(ctx, strings.NewReader("y\n"), out, store, defaultPrompt, true) }()
		time.Sleep(10 * 24 * time.Hour) // the bubble starts on Saturday 1 January 2000
		synctest.Wait()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		got := out.String()
		for _, want := range []string{
			"The agent wants to run start_automation (write)",
			"Done: every Monday at 9:00 (Europe/Paris) I will check the sales report. First runs: 2000-01-03T09:00:00+01:00 (Monday)",
			"1 automation(s):",
			"cron 0 9 * * MON in Europe/Paris",
			"next: Mon 3 Jan 2000 09:00 CET",
			"] Sales are up 4% on last week and refunds fell from 7 to 3.",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("output lacks %q:\n%s", want, got)
			}
		}
		if n := strings.Count(got, "] Sales are up"); n != 2 { // 3 and 10 January
			t.Errorf("%d fires in ten days, want 2:\n%s", n, got)
		}
	})
	b, err := os.ReadFile(store)
	if err != nil || !strings.Contains(string(b), `"cron": "0 9 * * MON"`) || !strings.Contains(string(b), `"runs": 2`) {
		t.Errorf("the store holds %s (%v)", b, err)
	}
}

func TestDenied(t *testing.T) {
	noModel(t)
	out := &syncBuffer{}
	if err := run(context.Background(), strings.NewReader("n\n"), out, "", defaultPrompt, false); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "I did not schedule it") || !strings.Contains(got, "0 automation(s):") {
		t.Errorf("output:\n%s", got)
	}
}
