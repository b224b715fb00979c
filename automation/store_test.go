package automation

import (
	"fmt"
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
	f.Add([]byte(`null`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"automations":null}`))
	f.Add([]byte(`{"automations":[{"id":"auto_4","agent":"a","input":"x","schedule":{"cron":"* * * * *","time_zone":"UTC"},"next":"2026-12-07T08:00:00Z"}]}`))
	f.Add([]byte(`{"automations":[{"id":"auto_5","agent":"a","input":"x","schedule":{"cron":"*/30 * * * *","time_zone":"UTC"},"next":"2026-12-07T08:00:00Z"},{"id":"auto_6","agent":"a","input":"x","schedule":{"cron":"0 * * * *","time_zone":"UTC"},"next":"2026-12-07T08:00:00Z"}]}`))
	dir := f.TempDir()
	// Two active at most, no two fires within ten minutes: the seeds hold
	// stores on both sides of each limit.
	limits := Limits{MaxActive: 2, MinInterval: 10 * time.Minute}
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "automations.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		as, ended, err := loadStore(path, limits)
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
		if len(as) > limits.MaxActive {
			t.Fatalf("loaded %d automations, over %d", len(as), limits.MaxActive)
		}
		for _, a := range as {
			if _, err := checkStored(a, limits, time.Now()); err != nil {
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

// TestStoreNotAStoreRefused: a file that holds no store — empty, blank,
// null, {}, a null list — is refused, naming the file and saying what to
// do, and left as it is: only a missing file makes a new store.
func TestStoreNotAStoreRefused(t *testing.T) {
	for name, content := range map[string]string{
		"empty":     "",
		"blank":     " \n\t",
		"null":      "null",
		"{}":        "{}",
		"null list": `{"automations":null}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "automations.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := NewLocal(path, Options{})
			if err == nil {
				l.Close()
				t.Fatal("a file that holds no store was opened as an empty store")
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, "fix or move the file") {
				t.Errorf("error %q does not name the file and say what to do", msg)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Errorf("the file was changed to %q", b)
			}
		})
	}
	l, err := NewLocal(filepath.Join(t.TempDir(), "new", "automations.json"), Options{})
	if err != nil {
		t.Fatalf("no file: %v; want a new store", err)
	}
	l.Close()
}

// storeOf is a store file holding n automations firing on cron, in UTC.
func storeOf(n int, cron string) string {
	var b strings.Builder
	b.WriteString(`{"automations":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"auto_%d","agent":"reporter","input":"ping","schedule":{"cron":%q,"time_zone":"UTC"},"created":"2026-12-01T10:00:00Z","next":"2026-12-01T10:01:00Z"}`, i, cron)
	}
	b.WriteString("]}\n")
	return b.String()
}

// TestStoreOverLimitsRefused: a file written by hand is held to the limits
// Create keeps: more automations than MaxActive (2,000 firing every
// minute), or a schedule firing more often than MinInterval, is refused at
// open with an error naming the file, the automation and the limit, and
// the file is left as it is. Within the limits it opens.
func TestStoreOverLimitsRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		limits  Limits
		want    []string
	}{
		{"2000 every minute", storeOf(2000, "* * * * *"), Limits{},
			[]string{"holds 2000 active automations, over the limit of 100", `automation 100 (id "auto_100")`, "raise the limit"}},
		{"one too many", storeOf(3, "0 * * * *"), Limits{MaxActive: 2},
			[]string{"holds 3 active automations, over the limit of 2"}},
		{"every minute", storeOf(1, "* * * * *"), Limits{MinInterval: 5 * time.Minute},
			[]string{`automation 0 (id "auto_0")`, "no closer than 5m0s"}},
		{"every second", strings.Replace(storeOf(1, "0 9 * * *"), `"0 9 * * *"`, `"* * * * * *"`, 1), Limits{},
			[]string{`automation 0 (id "auto_0")`, "does not parse"}},
		{"both days", storeOf(1, "0 9 1 * MON"), Limits{},
			[]string{`automation 0 (id "auto_0")`, "both a day of month and a day of week"}},
		{"long cron", storeOf(1, "0 9 * * *"+strings.Repeat(" ", maxCron)), Limits{},
			[]string{`automation 0 (id "auto_0")`, "over the limit of 512"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "automations.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := NewLocal(path, Options{Limits: tc.limits})
			if err == nil {
				l.Close()
				t.Fatal("a store over the limits was opened")
			}
			for _, want := range append(tc.want, path, "fix or move the file") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if b, _ := os.ReadFile(path); string(b) != tc.content {
				t.Error("the file was changed")
			}
		})
	}
	path := filepath.Join(t.TempDir(), "automations.json")
	if err := os.WriteFile(path, []byte(storeOf(100, "0 * * * *")), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := NewLocal(path, Options{})
	if err != nil {
		t.Fatalf("100 hourly automations, the limit: %v", err)
	}
	l.Close()
}
