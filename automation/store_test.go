package automation

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzLoadStore: whatever the file holds, loading it returns automations
// that could have been stored, or an error; never a panic.
func FuzzLoadStore(f *testing.F) {
	f.Add([]byte(`{"automations":[{"id":"auto_1","agent":"a","input":"x","schedule":{"cron":"0 9 * * MON","time_zone":"Europe/Paris"},"created":"2026-12-01T10:00:00Z","runs":1,"next":"2026-12-07T08:00:00Z"}]}`))
	f.Add([]byte(`{"automations":[{"id":"auto_2","agent":"a","input":"x","schedule":{"at":"2026-12-24T09:00:00+01:00","time_zone":"Europe/Paris"},"next":"2026-12-24T08:00:00Z"}]}`))
	f.Add([]byte(`{"automations":[]}`))
	f.Add([]byte(`{"automations":[],"ended":[{"id":"auto_3","agent":"a","input":"x","schedule":{"at":"2026-12-24T09:00:00+01:00","time_zone":"Europe/Paris"},"idempotency_key":"run_1:call_1","runs":1,"ended":"2026-12-24T08:00:00Z"}]}`))
	f.Add([]byte(``))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"automations":[{"id":"a"}]} {}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "automations.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		as, ended, err := loadStore(path)
		if err != nil {
			return
		}
		if len(ended) > MaxEnded {
			t.Fatalf("loaded %d ended automations, over %d", len(ended), MaxEnded)
		}
		for _, a := range ended {
			if err := checkEnded(a); err != nil {
				t.Fatalf("loaded ended %+v: %v", a, err)
			}
		}
		for _, a := range as {
			if err := checkStored(a); err != nil {
				t.Fatalf("loaded %+v: %v", a, err)
			}
			a.Fires(time.Now(), 3) // must not loop or panic
		}
	})
}

// lowerMaxStore sets maxStore to n for the test.
func lowerMaxStore(t *testing.T, n int64) {
	t.Helper()
	old := maxStore
	maxStore = n
	t.Cleanup(func() { maxStore = old })
}

// TestStoreTooLargeRefused: a file over the limit is refused with a
// sentence saying so, at every open, and left as it is.
func TestStoreTooLargeRefused(t *testing.T) {
	lowerMaxStore(t, 1<<10)
	path := filepath.Join(t.TempDir(), "automations.json")
	content := `{"automations":[]}` + strings.Repeat(" ", int(maxStore))
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		l, err := NewLocal(path, Options{})
		if err == nil {
			l.Close()
			t.Fatal("a file over the limit was opened")
		}
		if msg := err.Error(); !strings.Contains(msg, "over the limit of 1024") || !strings.Contains(msg, "fix or move the file") {
			t.Errorf("error %q does not say the file is too large and what to do", msg)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Error("the file was changed")
	}
}
