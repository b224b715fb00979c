package automation

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzLoadStore: whatever the file holds, loading it returns automations
// that could have been stored, or an error; never a panic.
func FuzzLoadStore(f *testing.F) {
	f.Add([]byte(`{"automations":[{"id":"auto_1","agent":"a","input":"x","schedule":{"cron":"0 9 * * MON","time_zone":"Europe/Paris"},"created":"2026-12-01T10:00:00Z","runs":1,"next":"2026-12-07T08:00:00Z"}]}`))
	f.Add([]byte(`{"automations":[{"id":"auto_2","agent":"a","input":"x","schedule":{"at":"2026-12-24T09:00:00+01:00","time_zone":"Europe/Paris"},"next":"2026-12-24T08:00:00Z"}]}`))
	f.Add([]byte(`{"automations":[]}`))
	f.Add([]byte(``))
	f.Add([]byte(`[`))
	f.Add([]byte(`{"automations":[{"id":"a"}]} {}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "automations.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		as, err := loadStore(path)
		if err != nil {
			return
		}
		for _, a := range as {
			if err := checkStored(a); err != nil {
				t.Fatalf("loaded %+v: %v", a, err)
			}
			a.Fires(time.Now(), 3) // must not loop or panic
		}
	})
}
