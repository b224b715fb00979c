package automation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/onionkit/onion/internal/atomicfile"
)

// This file is the in-process scheduler's store: one JSON file, read once
// when the scheduler opens it and replaced atomically on every change.

// storeFile is what the file holds.
type storeFile struct {
	Automations []Automation `json:"automations"`
	// Ended are the last automations made with an idempotency key that
	// ended, the oldest first (see Automation.Ended). Files written before
	// it existed have none.
	Ended []Automation `json:"ended,omitempty"`
}

// MaxEnded is how many ended automations a Local remembers, so that a
// repeat of the call that made one is not taken for a new call. Each is
// an active automation's size at most, so the store stays far under its
// limit.
const MaxEnded = 1000

// maxStore bounds the file read: 100 automations of 8 KiB inputs fit many
// times over. A variable so that tests can lower it.
var maxStore int64 = 64 << 20

// loadStore reads the active and the ended automations stored at path
// (at most MaxEnded of those, the latest). A missing file holds none.
// Anything else that is not a store the scheduler could have written under
// limits is an error naming the file and saying what to do: what is not a
// regular file, a file over maxStore bytes, an empty one, null, {} or any
// other shape, and an automation Create would have refused — its agent,
// input or schedule (Limits.Admit, but for times past), or one past
// limits.MaxActive. So a damaged file is never taken for an empty one and
// overwritten, and a file written by hand fires no more than Create lets
// automations fire.
func loadStore(path string, limits Limits) (active, ended []Automation, err error) {
	b, err := atomicfile.ReadFile(path, maxStore)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("automation: %w: fix or move the file", err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, nil, fmt.Errorf("automation: %s is empty, not a store of automations: fix or move the file (where there is none, a new store is made)", path)
	}
	var f storeFile
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil || dec.More() {
		if err == nil {
			err = errors.New("data after the object")
		}
		return nil, nil, fmt.Errorf("automation: %s is not a store of automations: fix or move the file: %w", path, err)
	}
	if f.Automations == nil { // null, {}, {"automations":null}
		return nil, nil, fmt.Errorf(`automation: %s is not a store of automations: it has no "automations" list: fix or move the file (where there is none, a new store is made)`, path)
	}
	limits = limits.withDefaults()
	if n := len(f.Automations); n > limits.MaxActive {
		return nil, nil, fmt.Errorf("automation: %s holds %d active automations, over the limit of %d (Options.Limits.MaxActive): automation %d (id %q) and those after it are past it: fix or move the file, or raise the limit", path, n, limits.MaxActive, limits.MaxActive, clip(f.Automations[limits.MaxActive].ID))
	}
	now := time.Now()
	seen := map[string]bool{}
	for i, a := range f.Automations {
		a, err := checkStored(a, limits, now)
		if err != nil {
			return nil, nil, fmt.Errorf("automation: %s, automation %d (id %q): %w: fix or move the file", path, i, clip(f.Automations[i].ID), err)
		}
		if seen[a.ID] {
			return nil, nil, fmt.Errorf("automation: %s holds two automations with id %q: fix or move the file", path, clip(a.ID))
		}
		seen[a.ID] = true
		f.Automations[i] = a
	}
	for i, a := range f.Ended {
		if err := checkEnded(a); err != nil {
			return nil, nil, fmt.Errorf("automation: %s, ended automation %d: %w: fix or move the file", path, i, err)
		}
	}
	if len(f.Ended) > MaxEnded {
		f.Ended = f.Ended[len(f.Ended)-MaxEnded:]
	}
	return f.Automations, f.Ended, nil
}

// checkStored checks an automation read from the file is one Create could
// have stored under limits, whatever its times, and returns it as Admit
// would have: agent and input trimmed, its schedule in normal form. now is
// where a cron's fires are looked at from.
func checkStored(a Automation, limits Limits, now time.Time) (Automation, error) {
	switch {
	case a.ID == "":
		return Automation{}, errors.New("no id")
	case a.Runs < 0:
		return Automation{}, errors.New("a negative count of runs")
	case a.Next.IsZero():
		return Automation{}, errors.New("no next fire")
	}
	a, err := content(a)
	if err != nil {
		return Automation{}, err
	}
	if a.Schedule, err = a.Schedule.normal(now, limits.MinInterval); err != nil {
		return Automation{}, err
	}
	return a, nil
}

// checkEnded checks an ended automation read from the file is one a Local
// could have kept.
func checkEnded(a Automation) error {
	switch {
	case a.ID == "":
		return errors.New("no id")
	case a.IdempotencyKey == "":
		return errors.New("no idempotency key")
	case a.Ended.IsZero():
		return errors.New("no time it ended")
	case len(a.Input) > maxInput:
		return errors.New("an input over the limit")
	}
	return nil
}

// clip bounds text from a file that an error quotes.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// resolveStore returns the file path names once every symbolic link on
// the way is followed, the last one too, even when its target does not
// exist yet. The scheduler locks and writes that file, not the link: the
// lock beside it is then the same for every path to it, and the rename
// that replaces the store replaces the file, not a link to it. Links are
// followed at most 40 times, as the kernel does, so that a loop ends.
func resolveStore(path string) (string, error) {
	p, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("automation: store %s: %w", path, err)
	}
	for range 40 {
		dir, err := filepath.EvalSymlinks(filepath.Dir(p))
		if err != nil {
			return "", fmt.Errorf("automation: store %s: %w", path, err)
		}
		p = filepath.Join(dir, filepath.Base(p))
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Mode()&fs.ModeSymlink == 0) {
			return p, nil
		}
		if err != nil {
			return "", fmt.Errorf("automation: store %s: %w", path, err)
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("automation: store %s: %w", path, err)
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		p = target
	}
	return "", fmt.Errorf("automation: store %s: too many symbolic links: give the path of the file", path)
}

// saveStore writes the active and the ended automations to path
// atomically: a temporary file in the same directory, synced, renamed over
// the old one, and the directory synced. It refuses to write a file
// loadStore would refuse as too large.
func saveStore(path string, active, ended []Automation) error {
	if active == nil {
		active = []Automation{}
	}
	b, err := json.MarshalIndent(storeFile{Automations: active, Ended: ended}, "", "  ")
	if err != nil {
		return fmt.Errorf("automation: encode: %w", err)
	}
	if int64(len(b)) >= maxStore {
		return fmt.Errorf("automation: save %s: %d bytes, over the limit of %d", path, len(b), maxStore)
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("automation: save %s: %w", path, err)
	}
	return nil
}
