package openai

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/png"
	"slices"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// pixel is a PNG of one pixel.
func pixel(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// dataURL decodes a data: URL of base64 bytes.
func dataURL(t *testing.T, u string) (mime string, data []byte) {
	t.Helper()
	rest, ok := strings.CutPrefix(u, "data:")
	head, payload, ok2 := strings.Cut(rest, ";base64,")
	if !ok || !ok2 {
		t.Fatalf("%.60q is not a data: URL of base64", u)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		t.Fatalf("%.60q: %v", u, err)
	}
	return head, data
}

const photoURL = "https://example.com/photo.jpg?size=large&q=\"x\""

// TestImagesInThePrompt: a prompt's images reach the server, on every
// wire, after the prompt's text: the bytes as a data: URL with their MIME
// type, a URL as it is (quotes and ampersands escaped as JSON, not
// mangled).
func TestImagesInThePrompt(t *testing.T) {
	px := pixel(t)
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Text("a pixel and a photo"))
			m := newModel(t, s, w.opts...)
			prompt := loop.Message{Role: loop.RoleUser, Content: "What is in the pictures?",
				Images: []loop.Image{{MIMEType: "image/png", Data: px}, {URL: photoURL}}}
			msgs, err := drive(context.Background(), m, nil, nil, prompt)
			if err != nil {
				t.Fatal(err)
			}
			if got := msgs[len(msgs)-1].Content; got != "a pixel and a photo" {
				t.Errorf("answer %q", got)
			}
			r := s.Requests()[0]
			imgs := r.Images()
			if len(imgs) != 2 {
				t.Fatalf("the server got %d images, want 2: %s", len(imgs), r.Raw)
			}
			mime, data := dataURL(t, imgs[0].URL)
			if mime != "image/png" || !bytes.Equal(data, px) || imgs[0].Role != "user" || imgs[0].Caption != prompt.Content {
				t.Errorf("first image: %s, %d bytes, role %q, caption %q", mime, len(data), imgs[0].Role, imgs[0].Caption)
			}
			if imgs[1].URL != photoURL || imgs[1].Role != "user" {
				t.Errorf("second image: %+v", imgs[1])
			}
			if r.Responses != nil && (imgs[0].Detail != "auto" || imgs[1].Detail != "auto") {
				t.Errorf("input_image without detail auto: %s", r.Raw)
			}
		})
	}
}

// TestImagesFromTools: the images a tool returned reach the model with
// the call they came from. On the Responses API they are parts of the
// call's function_call_output; on Chat Completions, whose tool messages
// take text only, the run of tool messages is followed by one user
// message that names the call and shows its images.
func TestImagesFromTools(t *testing.T) {
	px := pixel(t)
	result := func(c loop.ToolRequest) loop.Message {
		if c.Name == "screenshot" {
			return loop.Message{Content: "screenshot taken", Images: []loop.Image{{MIMEType: "image/png", Data: px}}}
		}
		return loop.Message{Content: "2 records"}
	}
	tools := append(slices.Clone(testTools), loop.ToolDef{Name: "screenshot", Parameters: json.RawMessage(`{"type":"object"}`)})
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("screenshot", `{}`), oniontest.Call("count", `{}`)),
				oniontest.Text("a black pixel"))
			m := newModel(t, s, w.opts...)
			msgs, err := drive(context.Background(), m, tools, result, userMessage("Take a screenshot and count."))
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 5 {
				t.Fatalf("%d messages, want 5", len(msgs))
			}
			call := msgs[1].ToolCalls[0].ID
			r := s.Requests()[1]
			imgs := r.Images()
			if len(imgs) != 1 {
				t.Fatalf("the server got %d images, want 1: %s", len(imgs), r.Raw)
			}
			if _, data := dataURL(t, imgs[0].URL); !bytes.Equal(data, px) {
				t.Errorf("the image's bytes changed on the way")
			}
			if r.Responses != nil {
				if imgs[0].Role != "tool" || imgs[0].CallID != call || imgs[0].Caption != "screenshot taken" || imgs[0].Detail != "auto" {
					t.Errorf("image %+v, want in the output of %s after its text", imgs[0], call)
				}
				return
			}
			want := "The tool call " + call + " (screenshot) returned this image:"
			if imgs[0].Role != "user" || imgs[0].Caption != want {
				t.Errorf("image shown by role %q with caption %q, want user and %q", imgs[0].Role, imgs[0].Caption, want)
			}
			var roles []string
			for _, msg := range r.Body.Messages {
				roles = append(roles, msg.Role)
			}
			if got := strings.Join(roles, " "); got != "user assistant tool tool user" {
				t.Errorf("roles %s, want the images after the run of tool messages", got)
			}
			for _, tr := range r.ToolResults() {
				if tr.Content == "" || len(tr.MultiContent) > 0 {
					t.Errorf("tool message %+v: want its text alone", tr)
				}
			}
		})
	}
}

// TestToolImagesKeepTurnsAlternating: on Chat Completions the user message
// showing a tool's images never follows another user message: when the
// conversation goes on with a user turn right after the tool results, the
// images open that turn.
func TestToolImagesKeepTurnsAlternating(t *testing.T) {
	img := []loop.Image{{URL: "https://example.com/a.png"}}
	call := func(id string) loop.ToolRequest { return loop.ToolRequest{ID: id, Name: "shot", Arguments: "{}"} }
	for _, tc := range []struct {
		name  string
		msgs  []loop.Message
		roles string
		parts []string // the parts of the last user message: text, or "img"
	}{
		{"then the answer", []loop.Message{
			{Role: loop.RoleSystem, Content: "sys"}, {Role: loop.RoleUser, Content: "go"},
			{Role: loop.RoleAssistant, ToolCalls: []loop.ToolRequest{call("a"), call("b")}},
			{Role: loop.RoleTool, ToolCallID: "a", Name: "shot", Content: "one", Images: img},
			{Role: loop.RoleTool, ToolCallID: "b", Name: "shot", Content: "two", Images: append(slices.Clone(img), img...)},
			{Role: loop.RoleAssistant, Content: "seen"},
		}, "system user assistant tool tool user assistant",
			[]string{"The tool call a (shot) returned this image:", "img", "The tool call b (shot) returned these 2 images:", "img", "img"}},
		{"then a user turn", []loop.Message{
			{Role: loop.RoleUser, Content: "go"},
			{Role: loop.RoleAssistant, ToolCalls: []loop.ToolRequest{call("a")}},
			{Role: loop.RoleTool, ToolCallID: "a", Content: "one", Images: img},
			{Role: loop.RoleUser, Content: "and now?", Images: img},
		}, "user assistant tool user",
			[]string{"The tool call a returned this image:", "img", "and now?", "img"}},
		{"no images", []loop.Message{
			{Role: loop.RoleUser, Content: "go"},
			{Role: loop.RoleAssistant, ToolCalls: []loop.ToolRequest{call("a")}},
			{Role: loop.RoleTool, ToolCallID: "a", Content: "one"},
		}, "user assistant tool", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var roles, parts []string
			chatMessages(tc.msgs, func(m *loop.Message, ps []part) {
				roles = append(roles, string(m.Role))
				if m.Role == loop.RoleUser && len(ps) > 0 {
					parts = parts[:0]
					for _, p := range ps {
						if p.image != nil {
							parts = append(parts, "img")
						} else {
							parts = append(parts, p.text)
						}
					}
				}
			})
			if got := strings.Join(roles, " "); got != tc.roles {
				t.Errorf("roles %s, want %s", got, tc.roles)
			}
			if !slices.Equal(parts, tc.parts) {
				t.Errorf("parts %q, want %q", parts, tc.parts)
			}
		})
	}
}

// TestImagesRefused: an image no wire can send as it is fails the request
// before anything is sent, naming the message and the image.
func TestImagesRefused(t *testing.T) {
	px := pixel(t)
	for _, tc := range []struct {
		name string
		msg  loop.Message
		want string
	}{
		{"too large", loop.Message{Role: loop.RoleUser, Images: []loop.Image{{MIMEType: "image/png", Data: make([]byte, maxImageBytes+1)}}}, "over the"},
		{"not an image", loop.Message{Role: loop.RoleUser, Images: []loop.Image{{Data: []byte("<html>")}}}, `MIME type "text/html; charset=utf-8"`},
		{"a MIME type that breaks the URL", loop.Message{Role: loop.RoleUser, Images: []loop.Image{{MIMEType: "image/png;base64,AAAA\",\"x", Data: px}}}, "is not an image's"},
		{"a file URL", loop.Message{Role: loop.RoleUser, Images: []loop.Image{{URL: "file:///etc/passwd"}}}, `URL scheme "file"`},
		{"empty", loop.Message{Role: loop.RoleUser, Images: []loop.Image{{}}}, "neither bytes nor a URL"},
		{"on an assistant message", loop.Message{Role: loop.RoleAssistant, Content: "x", Images: []loop.Image{{URL: "https://a/b.png"}}}, "only user and tool messages"},
		{"too many", loop.Message{Role: loop.RoleUser, Images: slices.Repeat([]loop.Image{{URL: "https://a/b.png"}}, maxImages+1)}, "more than 500 images"},
	} {
		for _, w := range wires[:2] {
			t.Run(tc.name+"/"+w.name, func(t *testing.T) {
				s := oniontest.NewServer(t)
				m := newModel(t, s, w.opts...)
				msgs := []loop.Message{userMessage("look"), tc.msg}
				_, err := m.Generate(context.Background(), &loop.Request{Model: "m", Messages: msgs}, nil)
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "message 1") {
					t.Errorf("err = %v, want it to name message 1 and say %q", err, tc.want)
				}
				if n := len(s.Requests()); n != 0 {
					t.Errorf("%d requests sent", n)
				}
			})
		}
	}
}

// TestImagesKeepTheRequestsPrefix: a run whose tool returned an image,
// on each wire: every request, up to the end of its conversation, is the
// start of the next one, the images (and on Chat Completions the message
// showing them) written the same way each time.
func TestImagesKeepTheRequestsPrefix(t *testing.T) {
	px := pixel(t)
	result := func(c loop.ToolRequest) loop.Message {
		if c.Name == "screenshot" {
			return loop.Message{Content: "taken", Images: []loop.Image{{MIMEType: "image/png", Data: px}, {URL: photoURL}}}
		}
		return loop.Message{Content: "2"}
	}
	tools := append(slices.Clone(testTools), loop.ToolDef{Name: "screenshot", Parameters: json.RawMessage(`{"type":"object"}`)})
	for _, w := range wires[:2] {
		t.Run(w.name, func(t *testing.T) {
			s := oniontest.NewServer(t,
				oniontest.ToolCalls(oniontest.Call("screenshot", `{}`)),
				oniontest.ToolCalls(oniontest.Call("count", `{}`)),
				oniontest.Text("done"))
			m := newModel(t, s, w.opts...)
			prompt := loop.Message{Role: loop.RoleUser, Content: "Look.", Images: []loop.Image{{MIMEType: "image/png", Data: px}}}
			if _, err := drive(context.Background(), m, tools, result, prompt); err != nil {
				t.Fatal(err)
			}
			reqs := s.Requests()
			for n := 0; n+1 < len(reqs); n++ {
				cur := reqs[n].Raw
				end := conversationEnd(t, cur)
				if !bytes.HasPrefix(reqs[n+1].Raw, cur[:end]) {
					t.Errorf("request %d (conversation ending at %d) is not the start of request %d:\n%s\n%s", n+1, end, n+2, cur, reqs[n+1].Raw)
				}
			}
		})
	}
}

// conversationEnd returns the offset in body of the closing bracket of
// its conversation: Chat Completions' messages, the Responses API's input.
func conversationEnd(t *testing.T, body []byte) int {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if key == "messages" || key == "input" {
			return int(dec.InputOffset()) - 1
		}
	}
	t.Fatalf("%s: no conversation", body)
	return 0
}
