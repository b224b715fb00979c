//go:build unix

package automation_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/automation"
)

// second opens another Local on path, and when that is allowed starts it
// with an agent of its own and counts its fires in n, so that a test sees
// what a second scheduler on the store would fire.
func second(t *testing.T, path string, n *atomic.Int32) error {
	t.Helper()
	l, err := automation.NewLocal(path, automation.Options{OnResult: func(context.Context, automation.Automation, *onion.Result, error) { n.Add(1) }})
	if err != nil {
		return err
	}
	t.Cleanup(func() { l.Close() })
	agent, err := onion.NewAgent("reporter", onion.WithModel(&model{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Start(agent); err != nil {
		t.Fatal(err)
	}
	return nil
}

// TestSecondSchedulerByOtherPathRefused: a second scheduler on the store
// reached by another path — a symbolic link to the file, one to its
// directory, a hard link made while the first is open — is refused, and
// the one-shot in it fires once, not once in each.
func TestSecondSchedulerByOtherPathRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		link func(dir, path string) (string, error)
		want string
	}{
		{"symlink to the file", func(dir, path string) (string, error) {
			other := filepath.Join(dir, "link.json")
			return other, os.Symlink(path, other)
		}, "open in another scheduler"},
		{"symlink to the directory", func(dir, path string) (string, error) {
			other := filepath.Join(t.TempDir(), "dir")
			return filepath.Join(other, filepath.Base(path)), os.Symlink(dir, other)
		}, "open in another scheduler"},
		{"hard link", func(dir, path string) (string, error) {
			other := filepath.Join(dir, "hard.json")
			return other, os.Link(path, other)
		}, "hard links"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "automations.json")
				h := open(t, path, nil, automation.Options{})
				a := create(t, h, automation.Automation{Input: "call Ann", Schedule: automation.Schedule{At: time.Now().Add(time.Minute), TimeZone: "UTC"}})
				other, err := tc.link(dir, path)
				if err != nil {
					t.Skipf("no link: %v", err)
				}
				var n atomic.Int32
				if err := second(t, other, &n); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("a second scheduler through %s: %v; want it refused saying %q", tc.name, err, tc.want)
				}
				until(a.Next)
				if fires := len(h.got()) + int(n.Load()); fires != 1 {
					t.Errorf("the one-shot fired %d times, want once", fires)
				}
			})
		})
	}
}

// TestHardLinkedStoreRefused: a store with two hard links is refused by
// either name, and left as it is: the rename of its first change would
// leave the other name a stale copy that a later scheduler could fire
// again.
func TestHardLinkedStoreRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "automations.json")
	content := `{"automations":[]}`
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(path, filepath.Join(dir, "hard.json")); err != nil {
		t.Skipf("no hard link: %v", err)
	}
	for _, p := range []string{path, filepath.Join(dir, "hard.json")} {
		l, err := automation.NewLocal(p, automation.Options{})
		if err == nil {
			l.Close()
			t.Errorf("%s, one of two hard links, was opened", p)
			continue
		}
		if !strings.Contains(err.Error(), "has 2 hard links") || !strings.Contains(err.Error(), "remove the other links") {
			t.Errorf("error %q does not say the file has hard links and what to do", err)
		}
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Errorf("the file was changed to %q", b)
	}
}

// TestStoreThroughSymlinkWritesTarget: a scheduler given a symbolic link
// writes the file it leads to; the link stays a link, so the next
// scheduler, by either path, reads what the first wrote.
func TestStoreThroughSymlinkWritesTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		path, link := filepath.Join(dir, "automations.json"), filepath.Join(dir, "link.json")
		if err := os.Symlink(path, link); err != nil {
			t.Skipf("no symbolic link: %v", err)
		}
		h := open(t, link, nil, automation.Options{})
		a := create(t, h, automation.Automation{Input: "digest", Schedule: automation.Schedule{Cron: "0 9 * * *", TimeZone: "UTC"}})
		h.Close()
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Fatalf("the link was replaced: %v, %v", fi.Mode(), err)
		}
		h2 := open(t, path, nil, automation.Options{})
		if as := list(t, h2); len(as) != 1 || as[0].ID != a.ID {
			t.Errorf("the file the link leads to holds %+v; want %s", as, a.ID)
		}
	})
}
