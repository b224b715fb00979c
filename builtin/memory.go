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
// the tool returns, so a crash never leaves a half-written file.
type Memory struct {
	path string // "" keeps the memory in this process only

	mu   sync.Mutex        // guards data and writes to path
	data map[string]string // key → value
}

// NewMemory opens the memory stored in the JSON file at path, or an empty one
// if the file does not exist yet (it is created on the first change). With
// path "" the memory lives in this process only. A file that is not a JSON
// object of strings is an error: it is never overwritten, so fix or move it.
func NewMemory(path string) (*Memory, error) {
	m := &Memory{path: path, data: map[string]string{}}
	if path == "" {
		return m, nil
	}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return m, nil
	case err != nil:
		return nil, fmt.Errorf("memory: %w", err)
	}
	if len(bytes.TrimSpace(b)) == 0 { // an empty file holds nothing to lose
		return m, nil
	}
	if b = bytes.TrimSpace(b); b[0] != '{' {
		return nil, fmt.Errorf("memory: %s is not a JSON object of strings: fix or move the file", path)
	}
	if err := json.Unmarshal(b, &m.data); err != nil {
		return nil, fmt.Errorf("memory: %s is not a JSON object of strings: fix or move the file: %w", path, err)
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
	switch {
	case value == "":
		return errors.New("memory: value is empty: to drop a key, call forget")
	case len(value) > maxMemoryValue:
		return fmt.Errorf("memory: value is %d bytes, over the limit of %d: shorten it or split it across several keys", len(value), maxMemoryValue)
	case !utf8.ValidString(value):
		return errors.New("memory: value is not valid UTF-8: send plain text")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, had := m.data[key]
	if had && old == value {
		return nil
	}
	if !had && len(m.data) >= maxMemoryEntries {
		return fmt.Errorf("memory: already holds %d keys, the limit: forget some first", maxMemoryEntries)
	}
	m.data[key] = value
	if err := m.save(); err != nil {
		if had { // keep memory and file in step
			m.data[key] = old
		} else {
			delete(m.data, key)
		}
		return err
	}
	return nil
}

// Recall returns the value stored under a key.
//
// key: the key the value was remembered under
//
//onion:intent read
func (m *Memory) Recall(key string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
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
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.data[key]
	if !ok {
		return m.unknown(key)
	}
	delete(m.data, key)
	if err := m.save(); err != nil {
		m.data[key] = old
		return err
	}
	return nil
}

// Memories returns every stored key with its value. Call it to see what is
// known before recalling or remembering.
//
//onion:intent read
func (m *Memory) Memories() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.data) // encodes with its keys sorted
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

// unknown is the error for a missing key; it names the keys there are, so
// the model can correct itself in one step. m.mu must be held.
func (m *Memory) unknown(key string) error {
	if len(m.data) == 0 {
		return fmt.Errorf("memory: nothing is stored under %q: memory is empty", key)
	}
	keys := slices.Sorted(maps.Keys(m.data))
	more := ""
	if len(keys) > 20 {
		more = fmt.Sprintf(" and %d more (call memories to see them all)", len(keys)-20)
		keys = keys[:20]
	}
	return fmt.Errorf("memory: nothing is stored under %q: known keys are %s%s", key, strings.Join(keys, ", "), more)
}

// save writes the whole memory to m.path atomically: a temporary file in the
// same directory, synced, then renamed over the old one. m.mu must be held.
func (m *Memory) save() error {
	if m.path == "" {
		return nil
	}
	b, err := json.MarshalIndent(m.data, "", "  ")
	if err != nil {
		return fmt.Errorf("memory: encode: %w", err)
	}
	b = append(b, '\n')
	dir := filepath.Dir(m.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("memory: save %s: %w", m.path, err)
	}
	if err := writeFileAtomic(dir, m.path, b); err != nil {
		return fmt.Errorf("memory: save %s: %w", m.path, err)
	}
	return nil
}

// writeFileAtomic replaces path with data through a synced temporary file in
// dir, so readers see the old content or the new, never a mix.
func writeFileAtomic(dir, path string, data []byte) (err error) {
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// Sync the directory so the rename itself survives a crash.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
