package oniontest_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion/oniontest"
)

// This file replays the recorded Responses API fixtures through the
// server and holds the copies to the shared ones.

// responsesFixtures lists the recorded Responses bodies (not the requests).
func responsesFixtures(t *testing.T) []string {
	t.Helper()
	all, err := filepath.Glob(filepath.Join("testdata", "fixtures", "responses", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range all {
		if !strings.HasSuffix(f, ".request.json") && !strings.HasSuffix(f, ".md") {
			files = append(files, f)
		}
	}
	if len(files) < 20 {
		t.Fatalf("found %d Responses fixtures, want the whole set", len(files))
	}
	return files
}

func TestReplayResponsesFixtures(t *testing.T) {
	for _, path := range responsesFixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s := oniontest.NewServer(t, oniontest.ReplayFile(t, path))
			_, got, err := postResponses(t, s, `{"model":"m","input":"hi","stream":true}`)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("served %d bytes that differ from the %d of %s", len(got), len(want), path)
			}
		})
	}
}

// TestResponsesFixtureCopiesMatchShared checks the copies against the
// shared store, where it exists (not in CI).
func TestResponsesFixtureCopiesMatchShared(t *testing.T) {
	const shared = "../../shared/fixtures/responses"
	if _, err := os.Stat(shared); err != nil {
		t.Skip("no shared fixture store at", shared)
	}
	orig, err := filepath.Glob(filepath.Join(shared, "*"))
	if err != nil {
		t.Fatal(err)
	}
	copies, _ := filepath.Glob(filepath.Join("testdata", "fixtures", "responses", "*"))
	if len(orig) != len(copies) {
		t.Errorf("%d files in the store, %d copies", len(orig), len(copies))
	}
	for _, o := range orig {
		want, _ := os.ReadFile(o)
		got, err := os.ReadFile(filepath.Join("testdata", "fixtures", "responses", filepath.Base(o)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: copy differs from the store (%v)", o, err)
		}
	}
}
