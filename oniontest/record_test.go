package oniontest_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// The wires and forms an agent's run may take.
var runKinds = []struct {
	name              string
	responses, stream bool
}{
	{"chat", false, false},
	{"chat stream", false, true},
	{"responses", true, false},
	{"responses stream", true, true},
}

// weatherUpstream is a model that asks for the weather, then answers.
func weatherUpstream(t *testing.T) *oniontest.Server {
	return oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
}

// runWeather runs a fresh weather agent on the endpoint at url, by Run or
// by Stream, with the key given.
func runWeather(t *testing.T, url, key string, responses, stream bool, prompt string) (*onion.Result, error) {
	t.Helper()
	items := []any{GetWeather, onion.BaseURL(url), onion.APIKey(key), onion.Retries(0)}
	if responses {
		items = append(items, onion.ResponsesAPI())
	}
	agent, err := onion.NewAgent("weather", items...)
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	if !stream {
		return agent.Run(context.Background(), prompt)
	}
	var res *onion.Result
	for ev, err := range agent.Stream(context.Background(), prompt) {
		if err != nil {
			return ev.Result, err
		}
		if ev.Kind == onion.EventDone {
			res = ev.Result
		}
	}
	return res, nil
}

// stable is r without what differs from run to run: its ID and the
// calls' durations.
func stable(r *onion.Result) onion.Result {
	c := *r
	c.RunID = ""
	c.ToolCalls = append([]onion.ToolCall(nil), r.ToolCalls...)
	for i := range c.ToolCalls {
		c.ToolCalls[i].Duration = 0
	}
	return c
}

// TestRecordThenPlayback: a run recorded against an upstream and played
// back to a fresh agent gives the same Result, on both wires, streamed
// and not, and the agent sends the played-back server the very requests
// the upstream got.
func TestRecordThenPlayback(t *testing.T) {
	for _, k := range runKinds {
		t.Run(k.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "weather.json")
			upstream := weatherUpstream(t)
			rec := oniontest.Record(t, upstream.URL(), file)
			recorded, err := runWeather(t, rec.URL(), "sk-test-SECRET", k.responses, k.stream, "Weather in Paris?")
			if err != nil {
				t.Fatal(err)
			}
			if recorded.Output != "It is sunny in Paris." || len(recorded.ToolCalls) != 1 {
				t.Fatalf("the recorded run: %+v", recorded)
			}
			if n := len(rec.Requests()); n != 2 {
				t.Errorf("the recorder kept %d requests, want 2", n)
			}
			rec.Close() // the file is complete

			play := oniontest.Playback(t, file)
			played, err := runWeather(t, play.URL(), "another-key", k.responses, k.stream, "Weather in Paris?")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := stable(played), stable(recorded); !reflect.DeepEqual(got, want) {
				t.Errorf("played back:\n%+v\nrecorded:\n%+v", got, want)
			}
			up, back := upstream.Requests(), play.Requests()
			if len(up) != 2 || len(back) != 2 {
				t.Fatalf("%d requests upstream, %d played back; want 2 and 2", len(up), len(back))
			}
			for i := range up {
				if !bytes.Equal(up[i].Raw, back[i].Raw) {
					t.Errorf("request %d:\nupstream:    %s\nplayed back: %s", i+1, up[i].Raw, back[i].Raw)
				}
				if up[i].Stream != k.stream || (up[i].Responses != nil) != k.responses {
					t.Errorf("request %d upstream: stream %v, responses %v", i+1, up[i].Stream, up[i].Responses != nil)
				}
			}
		})
	}
}

// fakeT captures the failures a server reports; anything else goes to
// the test it wraps (its cleanups run when that test ends).
type fakeT struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}

func (f *fakeT) failures() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.errors, "\n")
}

// record records the weather run of a kind and returns the file.
func record(t *testing.T, responses, stream bool) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "weather.json")
	rec := oniontest.Record(t, weatherUpstream(t).URL(), file)
	if _, err := runWeather(t, rec.URL(), "sk-test-SECRET", responses, stream, "Weather in Paris?"); err != nil {
		t.Fatal(err)
	}
	rec.Close()
	return file
}

// TestPlaybackDiff: an agent that sends another prompt than the recorded
// one fails the test with a diff that names the field and shows both
// values, and its run ends with an error saying the same.
func TestPlaybackDiff(t *testing.T) {
	field := map[bool]string{false: "messages.1.content", true: "input.0.content"}
	for _, k := range runKinds {
		t.Run(k.name, func(t *testing.T) {
			file := record(t, k.responses, k.stream)
			ft := &fakeT{TB: t}
			play := oniontest.Playback(ft, file)
			_, err := runWeather(t, play.URL(), "sk-test-SECRET", k.responses, k.stream, "Weather in Rome?")
			if err == nil || !strings.Contains(err.Error(), field[k.responses]) {
				t.Errorf("the run's error: %v; want one naming %s", err, field[k.responses])
			}
			got := ft.failures()
			want := fmt.Sprintf("request #1 differs from the one recorded in exchange 1:\n"+
				"  (- recorded, + sent)\n"+
				"  %s:\n"+
				"    - \"Weather in Paris?\"\n"+
				"    + \"Weather in Rome?\"\n", field[k.responses])
			if !strings.Contains(got, want) {
				t.Errorf("the failure:\n%s\nwant it to hold:\n%s", got, want)
			}
			if strings.Count(got, "differs") != 1 {
				t.Errorf("the difference was reported %d times, want once:\n%s", strings.Count(got, "differs"), got)
			}
		})
	}
}

// TestPlaybackCounts: a request past the recorded ones fails the test, and
// so does a recorded exchange nobody asked for by the end of the test.
func TestPlaybackCounts(t *testing.T) {
	file := record(t, false, false)
	var extra, missing fakeT
	t.Run("extra", func(t *testing.T) {
		extra.TB = t
		play := oniontest.Playback(&extra, file)
		if _, err := runWeather(t, play.URL(), "k", false, false, "Weather in Paris?"); err != nil {
			t.Fatal(err)
		}
		if _, err := runWeather(t, play.URL(), "k", false, false, "Weather in Paris?"); err == nil {
			t.Error("a run past the recording succeeded")
		}
	})
	t.Run("missing", func(t *testing.T) {
		missing.TB = t
		oniontest.Playback(&missing, file)
	})
	// The subtests' cleanups have run: the servers are closed.
	if got := extra.failures(); !strings.Contains(got, "request #3 (POST /v1/chat/completions) comes after the 2 recorded") {
		t.Errorf("a request past the end: %q", got)
	}
	if got := missing.failures(); !strings.Contains(got, "2 of the 2 recorded exchanges were never asked for, from exchange 1 on") {
		t.Errorf("exchanges never asked for: %q", got)
	}
}

// TestRecordNoKey: the client's keys reach the upstream but not the file:
// no Authorization header, no key in the bodies, the path, the query or
// the reply headers, whichever header or parameter carried it.
func TestRecordNoKey(t *testing.T) {
	const key, other, inQuery = "sk-test-SECRET", "azure-SECRET-2", "gemini-SECRET-3"
	upstream := oniontest.NewServer(t,
		oniontest.Text("Your key is "+key+", and "+other+"."),
		oniontest.Error(http.StatusUnauthorized, `{"error":{"message":"Incorrect API key provided: `+key+`.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
		oniontest.Text("ok"),
	)
	file := filepath.Join(t.TempDir(), "keys.json")
	rec := oniontest.Record(t, upstream.URL(), file)
	send := func(header, value, query, prompt string) {
		t.Helper()
		body := fmt.Sprintf(`{"model":"gpt-4.1","messages":[{"role":"user","content":%q}]}`, prompt)
		req, err := http.NewRequest(http.MethodPost, rec.URL()+"/chat/completions"+query, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(header, value)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	send("Authorization", "Bearer "+key, "", "My key is "+key)
	send("Api-Key", other, "", "hello")
	send("X-Api-Key", other, "?key="+inQuery, "and "+inQuery)
	rec.Close()

	up := upstream.Requests()
	if len(up) != 3 || up[0].Header.Get("Authorization") != "Bearer "+key || up[1].Header.Get("Api-Key") != other {
		t.Fatalf("the keys did not reach the upstream: %d requests", len(up))
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{key, other, inQuery, "SECRET", "Authorization", "Bearer", "Api-Key", "X-Api-Key"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the file holds %q:\n%s", secret, b)
		}
	}
	if n := bytes.Count(b, []byte("[redacted]")); n < 5 {
		t.Errorf("the file has %d [redacted], want at least 5 (prompts, replies, query):\n%s", n, b)
	}
}

// TestRecordStreamsByteForByte: a stream passes through the recorder and
// into the file byte for byte, and playback serves the same bytes, on
// both wires; so does a body that is not UTF-8, kept as base64.
func TestRecordStreamsByteForByte(t *testing.T) {
	chatSSE := readFixture(t, "openai/chat_stream_tool_call.sse")
	respSSE := readFixture(t, "responses/openai_stream_reasoning_function_call.sse")
	binary := []byte{0xff, 0xfe, 'a', 0x00, 0x80, '\n', '\n'}
	upstream := oniontest.NewServer(t,
		oniontest.Replay("text/event-stream", chatSSE),
		oniontest.Replay("text/event-stream", respSSE),
		oniontest.ReplayStatus(http.StatusOK, "application/octet-stream", binary),
	)
	file := filepath.Join(t.TempDir(), "streams.json")
	rec := oniontest.Record(t, upstream.URL(), file)
	requests := []struct {
		path, body string
		want       []byte
	}{
		{"/chat/completions", `{"model":"gpt-4.1","stream":true,"messages":[{"role":"user","content":"hi"}]}`, chatSSE},
		{"/responses", `{"model":"o4-mini","stream":true,"input":"hi"}`, respSSE},
		{"/chat/completions", `{"model":"gpt-4.1","messages":[{"role":"user","content":"bytes"}]}`, binary},
	}
	for i, r := range requests {
		if got := postTo(t, rec.URL()+r.path, r.body); !bytes.Equal(got, r.want) {
			t.Errorf("request %d through the recorder: %d bytes differ from the upstream's %d", i+1, len(got), len(r.want))
		}
	}
	rec.Close()

	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Exchanges []struct {
			Response struct {
				Header     map[string]string
				Events     []string
				BodyBase64 []byte `json:"body_base64"`
			}
		}
	}
	if err := json.Unmarshal(b, &f); err != nil || len(f.Exchanges) != 3 {
		t.Fatalf("the file: %v, %d exchanges", err, len(f.Exchanges))
	}
	for i, want := range [][]byte{chatSSE, respSSE} {
		ex := f.Exchanges[i].Response
		if got := strings.Join(ex.Events, ""); got != string(want) || ex.Header["Content-Type"] != "text/event-stream" {
			t.Errorf("exchange %d in the file: %d events, %d bytes, content type %q; want the upstream's %d bytes",
				i+1, len(ex.Events), len(got), ex.Header["Content-Type"], len(want))
		}
		if n := bytes.Count(want, []byte("\n\n")); len(ex.Events) != n {
			t.Errorf("exchange %d: %d events in the file, want %d", i+1, len(ex.Events), n)
		}
	}
	if got := f.Exchanges[2].Response.BodyBase64; !bytes.Equal(got, binary) {
		t.Errorf("the binary body in the file: %q", got)
	}

	play := oniontest.Playback(t, file)
	for i, r := range requests {
		if got := postTo(t, play.URL()+r.path, r.body); !bytes.Equal(got, r.want) {
			t.Errorf("request %d played back: %d bytes differ from the upstream's %d", i+1, len(got), len(r.want))
		}
	}
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// postTo posts body to url and returns the reply's body.
func postTo(t *testing.T, url, body string) []byte {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPlaybackVolatile: fields marked volatile, in the file (at the top or
// on one request) or with the Volatile option, may differ; others still
// may not.
func TestPlaybackVolatile(t *testing.T) {
	upstream := oniontest.NewServer(t, oniontest.Text("a"), oniontest.Text("b"))
	file := filepath.Join(t.TempDir(), "volatile.json")
	rec := oniontest.Record(t, upstream.URL(), file)
	const first = `{"model":"m","user":"u-1","metadata":{"trace":"t-1","n":1},"messages":[{"role":"user","content":"hi","name":"x-1"}]}`
	const second = `{"model":"m","user":"u-1","messages":[{"role":"user","content":"again"}]}`
	postTo(t, rec.URL()+"/chat/completions", first)
	postTo(t, rec.URL()+"/chat/completions", second)
	rec.Close()
	const changed = `{"model":"m","user":"u-2","metadata":{"trace":"t-2","n":1},"messages":[{"role":"user","content":"hi","name":"x-2"}]}`

	play := func(t *testing.T, file string, opts ...oniontest.RecordingOption) string {
		ft := &fakeT{TB: t}
		s := oniontest.Playback(ft, file, opts...)
		postTo(t, s.URL()+"/chat/completions", changed)
		postTo(t, s.URL()+"/chat/completions", strings.Replace(second, "u-1", "u-2", 1))
		return ft.failures()
	}
	t.Run("none", func(t *testing.T) {
		got, _, _ := strings.Cut(play(t, file), "request #2") // a request that differs does not use up its exchange
		for _, p := range []string{"  user:\n    - \"u-1\"\n    + \"u-2\"", "  metadata.trace:", "  messages.0.name:"} {
			if !strings.Contains(got, p) {
				t.Errorf("the failure does not name %q:\n%s", p, got)
			}
		}
		if strings.Contains(got, "metadata.n") || strings.Contains(got, "content") {
			t.Errorf("the failure names fields that did not change:\n%s", got)
		}
	})
	t.Run("option", func(t *testing.T) {
		if got := play(t, file, oniontest.Volatile("user", "metadata.trace", "messages.*.name")); got != "" {
			t.Errorf("with the volatile fields given: %s", got)
		}
	})
	t.Run("file", func(t *testing.T) {
		var doc map[string]any
		b, _ := os.ReadFile(file)
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		doc["volatile"] = []string{"user"}
		ex := doc["exchanges"].([]any)[0].(map[string]any)["request"].(map[string]any)
		ex["volatile"] = []string{"metadata.trace", "messages.0.name"}
		edited := filepath.Join(t.TempDir(), "edited.json")
		b, _ = json.Marshal(doc)
		if err := os.WriteFile(edited, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if got := play(t, edited); got != "" {
			t.Errorf("with the volatile fields in the file: %s", got)
		}
	})
	t.Run("not all", func(t *testing.T) {
		got := play(t, file, oniontest.Volatile("user", "metadata"))
		if !strings.Contains(got, "messages.0.name") || strings.Contains(got, "user") || strings.Contains(got, "metadata") {
			t.Errorf("with user and metadata volatile: %s", got)
		}
	})
}

// TestRecordKeepsVolatile: recording again into a file keeps the fields
// marked volatile at its top, and adds those given with Volatile.
func TestRecordKeepsVolatile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "again.json")
	if err := os.WriteFile(file, []byte(`{"format":"oniontest/recording/1","volatile":["user"],"exchanges":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("record", func(t *testing.T) {
		rec := oniontest.Record(t, oniontest.NewServer(t, oniontest.Text("a")).URL(), file, oniontest.Volatile("metadata"))
		postTo(t, rec.URL()+"/chat/completions", `{"model":"m","messages":[]}`)
	})
	var f struct {
		Volatile  []string
		Exchanges []any
	}
	b, _ := os.ReadFile(file)
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.Volatile, ",") != "user,metadata" || len(f.Exchanges) != 1 {
		t.Errorf("volatile %q, %d exchanges; want user,metadata and 1", f.Volatile, len(f.Exchanges))
	}
}

// TestPlaybackBadFile: a file that is not a recording stops the test.
func TestPlaybackBadFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"missing.json": "",
		"notjson.json": "{",
		"format.json":  `{"format":"other","exchanges":[]}`,
		"status.json":  `{"format":"oniontest/recording/1","exchanges":[{"request":{"method":"POST","path":"/v1/x"},"response":{"status":0}}]}`,
		"bodies.json":  `{"format":"oniontest/recording/1","exchanges":[{"request":{"method":"POST","path":"/v1/x"},"response":{"status":200,"body":"a","events":["b"]}}]}`,
	} {
		path := filepath.Join(dir, name)
		if content != "" {
			os.WriteFile(path, []byte(content), 0o644)
		}
		ft := &fatalT{fakeT: fakeT{TB: t}}
		done := make(chan struct{})
		go func() { // Fatalf ends the goroutine, as it ends a test's
			defer close(done)
			oniontest.Playback(ft, path)
		}()
		<-done
		if !strings.Contains(ft.failures(), "oniontest: Playback: ") {
			t.Errorf("%s: %q", name, ft.failures())
		}
	}
}

// fatalT is a fakeT whose Fatalf stops the goroutine.
type fatalT struct{ fakeT }

func (f *fatalT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

// TestRecordUpstreamDown: a request the upstream cannot be reached for
// fails the test and gets a 502, and nothing is recorded for it.
func TestRecordUpstreamDown(t *testing.T) {
	upstream := oniontest.NewServer(t)
	upstream.Close()
	file := filepath.Join(t.TempDir(), "down.json")
	ft := &fakeT{TB: t}
	rec := oniontest.Record(ft, upstream.URL(), file)
	resp, err := http.Post(rec.URL()+"/chat/completions", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	rec.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("status %d, want 502", resp.StatusCode)
	}
	if got := ft.failures(); !strings.Contains(got, "oniontest: record: request #1 upstream: ") {
		t.Errorf("the failure: %q", got)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Exchanges []any }
	if err := json.Unmarshal(b, &f); err != nil || len(f.Exchanges) != 0 {
		t.Errorf("the file: %v, %d exchanges, want none:\n%s", err, len(f.Exchanges), b)
	}
}

// TestRecordConcurrent: requests recorded at once each keep their own
// reply, and every one is in the file.
func TestRecordConcurrent(t *testing.T) {
	const n = 8
	echo := oniontest.Func(func(r oniontest.Request) oniontest.Step {
		return oniontest.Text("re: " + r.Body.Messages[0].Content)
	})
	steps := make([]oniontest.Step, n)
	for i := range steps {
		steps[i] = echo
	}
	file := filepath.Join(t.TempDir(), "concurrent.json")
	rec := oniontest.Record(t, oniontest.NewServer(t, steps...).URL(), file)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"q%d"}]}`, i)
			resp, err := http.Post(rec.URL()+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		})
	}
	wg.Wait()
	rec.Close()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Exchanges []struct {
			Request struct {
				JSON struct {
					Messages []struct{ Content string }
				}
			}
			Response struct{ Body string }
		}
	}
	if err := json.Unmarshal(b, &f); err != nil || len(f.Exchanges) != n {
		t.Fatalf("the file: %v, %d exchanges, want %d", err, len(f.Exchanges), n)
	}
	for i, ex := range f.Exchanges {
		q := ex.Request.JSON.Messages[0].Content
		if !strings.Contains(ex.Response.Body, `"content":"re: `+q+`"`) {
			t.Errorf("exchange %d: the request asks %q, the reply is %s", i+1, q, ex.Response.Body)
		}
	}
}

// TestRecordCompressed: a reply the upstream compresses is recorded, and
// passed on, as the text it is.
func TestRecordCompressed(t *testing.T) {
	const body = `{"id":"chatcmpl-1","object":"chat.completion","choices":[]}` + "\n"
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			t.Errorf("the upstream was not offered gzip: %q", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, body)
		zw.Close()
	}))
	defer upstream.Close()
	file := filepath.Join(t.TempDir(), "gzip.json")
	rec := oniontest.Record(t, upstream.URL+"/v1", file)
	if got := postTo(t, rec.URL()+"/chat/completions", `{"model":"m"}`); string(got) != body {
		t.Errorf("through the recorder: %q", got)
	}
	rec.Close()
	if got := postTo(t, oniontest.Playback(t, file).URL()+"/chat/completions", `{"model":"m"}`); string(got) != body {
		t.Errorf("played back: %q", got)
	}
}
