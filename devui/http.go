package devui

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// The page: one HTML file, its script and its style, embedded.
//
//go:embed static
var static embed.FS

// tokenPlaceholder is where index.html takes the UI's token.
const tokenPlaceholder = "{{TOKEN}}"

// Bounds of the bodies the page sends, besides a conversation
// (maxSession) and a recording (maxRecording).
const (
	maxPrompt   = 256 << 10
	maxCallBody = 2 << 20
	maxSmall    = 4 << 10
)

// statusError is an error with the HTTP status it answers a call with.
type statusError struct {
	code int
	err  error
}

func (e statusError) Error() string { return e.err.Error() }
func (e statusError) Unwrap() error { return e.err }

func withStatus(code int, err error) error { return statusError{code, err} }

func (u *UI) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", u.servePage)
	files, _ := fs.Sub(static, "static")
	m.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(files)))
	m.HandleFunc("GET /api/events", u.guard(true, u.serveEvents))
	m.HandleFunc("GET /api/runs/{run}/steps/{step}", u.guard(false, u.serveStep))
	m.HandleFunc("POST /api/runs/{run}/stop", u.guard(false, func(w http.ResponseWriter, r *http.Request) {
		reply(w, nil, u.stop(r.PathValue("run")))
	}))
	m.HandleFunc("POST /api/approvals/{id}", u.guard(false, func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Approve bool `json:"approve"`
		}
		if readJSON(w, r, maxSmall, &in) {
			reply(w, nil, u.answer(r.PathValue("id"), in.Approve))
		}
	}))
	m.HandleFunc("POST /api/conversations", u.guard(false, u.upload(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Agent   int             `json:"agent"`
			Title   string          `json:"title"`
			History json.RawMessage `json:"history"`
		}
		if readJSON(w, r, maxSession+maxSmall, &in) {
			cv, err := u.newConv(in.Agent, in.Title, in.History)
			reply(w, cv, err)
		}
	})))
	m.HandleFunc("GET /api/conversations/{id}/history", u.guard(false, func(w http.ResponseWriter, r *http.Request) {
		b, err := u.history(r.PathValue("id"))
		if err != nil {
			reply(w, nil, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": "conversation-" + r.PathValue("id") + ".json"}))
		w.Write(append(b, '\n'))
	}))
	m.HandleFunc("POST /api/conversations/{id}/prompt", u.guard(false, func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Prompt string `json:"prompt"`
		}
		if readJSON(w, r, maxPrompt, &in) {
			run, err := u.prompt(r.PathValue("id"), in.Prompt)
			var id string
			if run != nil {
				id = run.ID
			}
			reply(w, map[string]string{"run": id}, err)
		}
	}))
	m.HandleFunc("POST /api/conversations/{id}/delete", u.guard(false, func(w http.ResponseWriter, r *http.Request) {
		reply(w, nil, u.deleteConv(r.PathValue("id")))
	}))
	m.HandleFunc("POST /api/tools/call", u.guard(false, func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Agent     int    `json:"agent"`
			Tool      string `json:"tool"`
			Arguments string `json:"arguments"`
			Approve   bool   `json:"approve"`
		}
		if readJSON(w, r, maxCallBody, &in) {
			res, err := u.call(r.Context(), in.Agent, in.Tool, in.Arguments, in.Approve)
			reply(w, res, err)
		}
	}))
	m.HandleFunc("POST /api/replays", u.guard(false, u.upload(func(w http.ResponseWriter, r *http.Request) {
		data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRecording))
		if err != nil {
			reply(w, nil, withStatus(http.StatusRequestEntityTooLarge, errRecordingTooBig))
			return
		}
		rp, err := u.parseReplay(r.URL.Query().Get("name"), data)
		reply(w, rp, err)
	})))
	return m
}

// guard serves only calls that carry the page's token (in the query for
// the event stream) and, for a POST, a JSON body: a form another site
// posts cannot be one.
func (u *UI) guard(inQuery bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := u.checkToken(r, inQuery); err != nil {
			reply(w, nil, withStatus(http.StatusForbidden, err))
			return
		}
		if r.Method == http.MethodPost {
			if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
				reply(w, nil, withStatus(http.StatusUnsupportedMediaType, errors.New("devui: a call's body must be application/json")))
				return
			}
		}
		h(w, r)
	}
}

// upload serves h only while fewer than maxUploads large bodies are
// being read, and refuses the call otherwise.
func (u *UI) upload(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case u.heavy <- struct{}{}:
			defer func() { <-u.heavy }()
			h(w, r)
		default:
			reply(w, nil, withStatus(http.StatusTooManyRequests, fmt.Errorf("devui: %d uploads are being read, the most at once: try again when one is done", maxUploads)))
		}
	}
}

// servePage serves the page with the UI's token in it.
func (u *UI) servePage(w http.ResponseWriter, r *http.Request) {
	page, err := static.ReadFile("static/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(bytes.Replace(page, []byte(tokenPlaceholder), []byte(u.token), 1))
}

// serveStep serves the JSON of a model request and its reply, as kept.
func (u *UI) serveStep(w http.ResponseWriter, r *http.Request) {
	n, err := strconv.Atoi(r.PathValue("step"))
	u.mu.Lock()
	run := u.findRun(r.PathValue("run"))
	var req, rep, wireReq, wireRep []byte
	found := false
	if run != nil && err == nil && n >= 1 && n <= len(run.steps) {
		st := run.steps[n-1]
		req, rep, wireReq, wireRep, found = st.request, st.reply, st.wireRequest, st.wireReply, true
	}
	u.mu.Unlock()
	if !found {
		reply(w, nil, withStatus(http.StatusNotFound, fmt.Errorf("devui: no step %q of run %q", r.PathValue("step"), r.PathValue("run"))))
		return
	}
	orNull := func(b []byte) []byte {
		if b == nil {
			return []byte("null")
		}
		return b
	}
	// The bytes on the wire go as JSON strings: a stream is no JSON.
	asText := func(b []byte) []byte {
		if b == nil {
			return []byte("null")
		}
		s, _ := json.Marshal(string(b))
		return s
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"request":%s,"reply":%s,"wire_request":%s,"wire_reply":%s}`, orNull(req), orNull(rep), asText(wireReq), asText(wireRep))
}

// readJSON decodes the body, of at most limit bytes, into v, or answers
// the call with what is wrong and reports false.
func readJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	if err := dec.Decode(v); err != nil {
		code := http.StatusBadRequest
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			code = http.StatusRequestEntityTooLarge
		}
		reply(w, nil, withStatus(code, fmt.Errorf("devui: read the call's JSON body: %w", err)))
		return false
	}
	return true
}

// reply answers a call: v as JSON, or err with its status (400 unless
// it carries another).
func reply(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	if err != nil {
		code := http.StatusBadRequest
		var se statusError
		switch {
		case errors.As(err, &se):
			code = se.code
		case errors.Is(err, errClosed):
			code = http.StatusServiceUnavailable
		case strings.HasPrefix(err.Error(), "devui: no "):
			code = http.StatusNotFound
		}
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	if v == nil {
		v = map[string]bool{"ok": true}
	}
	json.NewEncoder(w).Encode(v)
}
