package automation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

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
// (at most MaxEnded of those, the latest). A missing or empty file holds
// none; anything else that is not a store of valid automations, or
// is over maxStore bytes, is an error, so that a damaged file is never
// taken for an empty one and overwritten.
func loadStore(path string) (active, ended []Automation, err error) {
	b, err := readStore(path)
	if err != nil || b == nil {
		return nil, nil, err
	}
	if b = bytes.TrimSpace(b); len(b) == 0 {
		return nil, nil, nil
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
	seen := map[string]bool{}
	for i, a := range f.Automations {
		if err := checkStored(a); err != nil {
			return nil, nil, fmt.Errorf("automation: %s, automation %d: %w: fix or move the file", path, i, err)
		}
		if seen[a.ID] {
			return nil, nil, fmt.Errorf("automation: %s holds two automations with id %q: fix or move the file", path, a.ID)
		}
		seen[a.ID] = true
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

// readStore reads the file at path, or nil when there is none, refusing
// one over maxStore bytes without reading more of it than that: its size
// is checked first, and the read is bounded too, for a file that grows or
// is not a regular file.
func readStore(path string) ([]byte, error) {
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("automation: %w", err)
	}
	defer f.Close()
	tooLarge := func(size string) error {
		return fmt.Errorf("automation: %s is %s bytes, over the limit of %d: fix or move the file", path, size, maxStore)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("automation: %w", err)
	}
	if fi.Size() > maxStore {
		return nil, tooLarge(strconv.FormatInt(fi.Size(), 10))
	}
	b, err := io.ReadAll(io.LimitReader(f, maxStore+1))
	if err != nil {
		return nil, fmt.Errorf("automation: read %s: %w", path, err)
	}
	if int64(len(b)) > maxStore {
		return nil, tooLarge("over " + strconv.FormatInt(maxStore, 10))
	}
	return b, nil
}

// checkStored checks an automation read from the file is one Create could
// have stored.
func checkStored(a Automation) error {
	s := a.Schedule
	switch {
	case a.ID == "":
		return errors.New("no id")
	case strings.TrimSpace(a.Agent) == "":
		return errors.New("no agent")
	case strings.TrimSpace(a.Input) == "" || len(a.Input) > maxInput:
		return errors.New("no input, or one over the limit")
	case s.At.IsZero() == (s.Cron == ""):
		return errors.New("neither a time nor a cron expression, or both")
	case a.Runs < 0 || s.MaxRuns < 0:
		return errors.New("a negative count of runs")
	case a.Next.IsZero():
		return errors.New("no next fire")
	}
	if _, err := s.location(); err != nil {
		return fmt.Errorf("time zone %q is unknown", s.TimeZone)
	}
	if s.Cron != "" {
		if _, err := cronParser.Parse(s.Cron); err != nil {
			return fmt.Errorf("cron %q: %w", s.Cron, err)
		}
	}
	return nil
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
