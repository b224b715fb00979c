package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/onionkit/onion/internal/atomicfile"
)

// Limits of a Memory: every value may be read back into the model's context.
const (
	maxMemoryKey     = 200  // bytes of one key
	maxMemoryValue   = 4096 // bytes of one value
	maxMemoryEntries = 1000 // keys in one memory
)

// Memory is a small key/value store the model uses to keep facts across
// conversations: user preferences, decisions, names. Its exported methods are
// the tools remember, recall, forget and memories. It is safe for concurrent
// use. When it has a file, every change is written to it atomically before
// the tool returns, so a crash never leaves a half-written file, and
// several Memory values and processes may share the file: each change is
// made to what the file holds at that moment, under a lock, so that none
// is lost, and each read sees the changes of the others.
type Memory struct {
	path string // "" keeps the memory in this process only

	mu   sync.Mutex        // guards data, and orders this value's uses of the file
	data map[string]string // key → value, as last read from or written to path
}

// NewMemory opens the memory stored in the JSON file at path, or an empty one
// if the file does not exist yet (it is created on the first change). With
// path "" the memory lives in this process only. A file that is not a JSON
// object of strings, or holds keys or values over the limits the tools
// keep (keys of 200 bytes, values of 4 KiB, 1000 keys), is an error: it is
// never overwritten, so fix or move it. Changes are made under a lock on
// the file path+".lock", which is created next to it and left there.
func NewMemory(path string) (*Memory, error) {
	m := &Memory{path: path, data: map[string]string{}}
	if path == "" {
		return m, nil
	}
	if err := m.refresh(); err != nil {
		return nil, err
	}
	return m, nil
}

// Remember stores a value under a key, replacing what the key held before.
// Keep one fact per key so that it can be recalled or forgotten on its own.
//
// key: a short name for the fact, such as "user.name" or "project.language"
// value: the fact itself, in plain text
//
//onion:idempotent
func (m *Memory) Remember(key, value string) error {
	if err := checkMemoryKey(key); err != nil {
		return err
	}
	if err := checkMemoryValue(value); err != nil {
		return err
	}
	return m.change(func(data map[string]string) (bool, error) {
		old, had := data[key]
		if had && old == value {
			return false, nil
		}
		if !had && len(data) >= maxMemoryEntries {
			return false, fmt.Errorf("memory: already holds %d keys, the limit: forget some first", maxMemoryEntries)
		}
		data[key] = value
		return true, nil
	})
}

// Recall returns the value stored under a key.
//
// key: the key the value was remembered under
//
//onion:intent read
func (m *Memory) Recall(key string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.refresh(); err != nil {
		return "", err
	}
	v, ok := m.data[key]
	if !ok {
		return "", m.unknown(key)
	}
	return v, nil
}

// Forget deletes a key and its value from memory.
//
// key: the key to delete
//
//onion:intent delete
func (m *Memory) Forget(key string) error {
	return m.change(func(data map[string]string) (bool, error) {
		if _, ok := data[key]; !ok {
			return false, unknownKey(data, key)
		}
		delete(data, key)
		return true, nil
	})
}

// Memories returns every stored key with its value. Call it to see what is
// known before recalling or remembering.
//
//onion:intent read
func (m *Memory) Memories() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	// Should the file be unreadable now, what was last read stands;
	// remember and forget report the error.
	m.refresh()
	return maps.Clone(m.data) // encodes with its keys sorted
}

// change applies fn to the memory as it is now — for a file, to what the
// file holds, read under its lock — and keeps the result if fn reports a
// change: for a file, it is written before the lock is let go.
func (m *Memory) change(fn func(data map[string]string) (changed bool, err error)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.path == "" {
		data := maps.Clone(m.data)
		if _, err := fn(data); err != nil {
			return err
		}
		m.data = data
		return nil
	}
	dir := filepath.Dir(m.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("memory: save %s: %w", m.path, err)
	}
	unlock, err := lockMemoryFile(m.path, true)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := loadMemory(m.path)
	if err != nil {
		return err
	}
	m.data = data
	next := maps.Clone(data)
	changed, err := fn(next)
	if err != nil || !changed {
		return err
	}
	if err := m.save(next); err != nil {
		return err // the file and m.data still hold what they held
	}
	m.data = next
	return nil
}

// refresh rereads the file, if any, under a shared lock. m.mu is held.
func (m *Memory) refresh() error {
	if m.path == "" {
		return nil
	}
	unlock, err := lockMemoryFile(m.path, false)
	if errors.Is(err, fs.ErrNotExist) {
		// No directory yet, so no file: nothing was stored.
		m.data = map[string]string{}
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock()
	data, err := loadMemory(m.path)
	if err != nil {
		return err
	}
	m.data = data
	return nil
}

// loadMemory reads the memory file at path and checks it holds what the
// tools could have stored. A missing or empty file is an empty memory.
func loadMemory(path string) (map[string]string, error) {
	data := map[string]string{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return data, nil
	case err != nil:
		return nil, fmt.Errorf("memory: %w", err)
	}
	if b = bytes.TrimSpace(b); len(b) == 0 { // an empty file holds nothing to lose
		return data, nil
	}
	if b[0] != '{' {
		return nil, fmt.Errorf("memory: %s is not a JSON object of strings: fix or move the file", path)
	}
	if err := json.Unmarshal(b, &data); err != nil {
		return nil, fmt.Errorf("memory: %s is not a JSON object of strings: fix or move the file: %w", path, err)
	}
	if len(data) > maxMemoryEntries {
		return nil, fmt.Errorf("memory: %s holds %d keys, over the limit of %d: fix or move the file", path, len(data), maxMemoryEntries)
	}
	for _, k := range slices.Sorted(maps.Keys(data)) {
		err := checkMemoryKey(k)
		if err == nil {
			err = checkMemoryValue(data[k])
		}
		if err != nil {
			shown := k
			if len(shown) > 40 {
				shown = strings.ToValidUTF8(shown[:40], "") + "…"
			}
			return nil, fmt.Errorf("memory: %s, key %q: %s: fix or move the file", path, shown, strings.TrimPrefix(err.Error(), "memory: "))
		}
	}
	return data, nil
}

func checkMemoryKey(key string) error {
	switch {
	case strings.TrimSpace(key) == "":
		return errors.New("memory: key is empty: name the fact, such as \"user.name\"")
	case len(key) > maxMemoryKey:
		return fmt.Errorf("memory: key is %d bytes, over the limit of %d: use a shorter key", len(key), maxMemoryKey)
	case !utf8.ValidString(key):
		return errors.New("memory: key is not valid UTF-8: send plain text")
	}
	return nil
}

func checkMemoryValue(value string) error {
	switch {
	case value == "":
		return errors.New("memory: value is empty: to drop a key, call forget")
	case len(value) > maxMemoryValue:
		return fmt.Errorf("memory: value is %d bytes, over the limit of %d: shorten it or split it across several keys", len(value), maxMemoryValue)
	case !utf8.ValidString(value):
		return errors.New("memory: value is not valid UTF-8: send plain text")
	}
	return nil
}

// unknown is the error for a missing key. m.mu must be held.
func (m *Memory) unknown(key string) error { return unknownKey(m.data, key) }

// unknownKey is the error for a key data lacks; it names the keys there
// are, so the model can correct itself in one step.
func unknownKey(data map[string]string, key string) error {
	if len(data) == 0 {
		return fmt.Errorf("memory: nothing is stored under %q: memory is empty", key)
	}
	keys := slices.Sorted(maps.Keys(data))
	more := ""
	if len(keys) > 20 {
		more = fmt.Sprintf(" and %d more (call memories to see them all)", len(keys)-20)
		keys = keys[:20]
	}
	return fmt.Errorf("memory: nothing is stored under %q: known keys are %s%s", key, strings.Join(keys, ", "), more)
}

// save writes data to m.path atomically: a temporary file in the same
// directory, synced, then renamed over the old one. The file's lock is
// held.
func (m *Memory) save(data map[string]string) error {
	b, err := json.MarshalIndent(data, "", "  ")
	if err != nil {
		return fmt.Errorf("memory: encode: %w", err)
	}
	b = append(b, '\n')
	if err := atomicfile.Write(m.path, b, 0o600); err != nil {
		return fmt.Errorf("memory: save %s: %w", m.path, err)
	}
	return nil
}
