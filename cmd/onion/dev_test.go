package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/onionkit/onion/oniontest"
)

// devCall posts body to the page's path with the page's token.
func devCall(t *testing.T, base, token, path string, body any) map[string]any {
	t.Helper()
	data, _ := json.Marshal(body)
	req, err := http.NewRequest("POST", base+path, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Onion-Token", token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%s: %d %v %v", path, resp.StatusCode, out, err)
	}
	return out
}

// TestDev serves the page with the tools and the model of the flags, on
// each form of loopback address: its form calls a tool, a prompt runs
// through the agent and streams to the page's event stream, a call from
// another origin is refused, and SIGINT stops it cleanly.
func TestDev(t *testing.T) {
	defer http.DefaultClient.CloseIdleConnections()
	for _, addr := range []string{"127.0.0.1:0", "localhost:0"} {
		t.Run(addr, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("add", `{"text":"tea"}`)), oniontest.Text("Added tea."))
			cmd := cli{env: model(s.URL())}.command(t, "dev", "-tools", "todo", "-http", addr, "-price", "gpt-4o-mini=0.15,0.60")
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			lines := bufio.NewScanner(stderr)
			if !lines.Scan() {
				cmd.Wait()
				t.Fatalf("no line on stderr; exit %d", cmd.ProcessState.ExitCode())
			}
			m := regexp.MustCompile(`^onion dev: open (http://127\.0\.0\.1:\d+)/ in a browser$`).FindStringSubmatch(lines.Text())
			if m == nil {
				t.Fatalf("first line %q, want where it serves", lines.Text())
			}
			base := m[1]
			resp, err := http.Get(base + "/")
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			tm := regexp.MustCompile(`<meta name="onion-token" content="([0-9a-f]{64})">`).FindSubmatch(page)
			if tm == nil {
				t.Fatalf("the page has no token:\n%s", page)
			}
			token := string(tm[1])

			if out := devCall(t, base, token, "/api/tools/call", map[string]any{"agent": 0, "tool": "add", "arguments": `{"text":"milk"}`}); out["output"] != `{"id":1,"text":"milk","done":false}` {
				t.Errorf("the form's call: %v", out)
			}
			events, err := http.Get(base + "/api/events?token=" + token)
			if err != nil {
				t.Fatal(err)
			}
			defer events.Body.Close()
			conv := devCall(t, base, token, "/api/conversations", map[string]any{"agent": 0})
			run := devCall(t, base, token, "/api/conversations/"+conv["id"].(string)+"/prompt", map[string]any{"prompt": "Add tea"})["run"].(string)
			stream := bufio.NewScanner(events.Body)
			stream.Buffer(nil, 1<<20)
			var seen []string
			for stream.Scan() {
				line, ok := strings.CutPrefix(stream.Text(), "data: ")
				if !ok {
					continue
				}
				var ev struct {
					Type string          `json:"type"`
					Data json.RawMessage `json:"data"`
				}
				json.Unmarshal([]byte(line), &ev)
				seen = append(seen, ev.Type)
				if ev.Type == "run" && strings.Contains(string(ev.Data), `"status":"done"`) {
					if !strings.Contains(string(ev.Data), `"output":"Added tea."`) || !strings.Contains(string(ev.Data), `"cost":`) {
						t.Errorf("the run: %s", ev.Data)
					}
					break
				}
			}
			if !strings.Contains(strings.Join(seen, " "), "tool") {
				t.Errorf("events %v: no tool call", seen)
			}
			// The first request, in onion's terms and on the wire.
			req, _ := http.NewRequest("GET", base+"/api/runs/"+run+"/steps/1", nil)
			req.Header.Set("X-Onion-Token", token)
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var step struct {
				Request     json.RawMessage `json:"request"`
				WireRequest string          `json:"wire_request"`
				WireReply   string          `json:"wire_reply"`
			}
			json.NewDecoder(resp.Body).Decode(&step)
			resp.Body.Close()
			if !strings.Contains(string(step.Request), `"Add tea"`) || !strings.Contains(step.WireRequest, `"Add tea"`) || !strings.Contains(step.WireReply, `"add"`) {
				t.Errorf("the first step's JSON: %s\nwire: %s\n%s", step.Request, step.WireRequest, step.WireReply)
			}
			// Another origin gets nothing.
			req, _ = http.NewRequest("POST", base+"/api/conversations", strings.NewReader(`{"agent":0}`))
			req.Header.Set("X-Onion-Token", token)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Origin", "http://evil.example")
			resp, err = http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("a call from another origin: %s", resp.Status)
			}

			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			for lines.Scan() {
				t.Logf("stderr: %s", lines.Text())
			}
			if err := cmd.Wait(); err != nil {
				t.Errorf("after SIGINT: %v; want exit status 0", err)
			}
		})
	}
}

// TestDevRefuses: an address other hosts reach without -http-public, a
// price it cannot read, an -approve naming no tool and -session (the page
// loads and saves conversations itself) are usage mistakes.
func TestDevRefuses(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-http", "0.0.0.0:0"}, "-http 0.0.0.0:0 is not a loopback address"},
		{[]string{"-price", "gpt-4o=cheap"}, `-price "gpt-4o=cheap": want MODEL=IN,OUT`},
		{[]string{"-price", "gpt-4o=1,x"}, `"x" is not a price`},
		{[]string{"-session", "s.json"}, "flag provided but not defined: -session"},
		{[]string{"-approve", "nope"}, "-approve names no tool nope"},
		{[]string{"prompt"}, "the prompts come from the page"},
	} {
		got := cli{}.onion(t, append([]string{"dev", "-tools", "todo"}, c.args...)...)
		if got.code != 2 || !strings.Contains(got.stderr, c.want) {
			t.Errorf("onion dev %q: exit %d, stderr %q; want 2 and %q", c.args, got.code, got.stderr, c.want)
		}
	}
}
