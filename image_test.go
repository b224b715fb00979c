package onion_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/oniontest"
)

// pngOf is a real PNG of w×h pixels, of one colour.
func pngOf(t testing.TB, w, h int, c color.Color) onion.Image {
	t.Helper()
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			m.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	img, err := onion.ImageData(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// captured is an agent whose requests go over HTTP to an oniontest
// server, through the agent newAgent makes (Chat Completions, or the
// Responses API on the rerun), and are kept as the loop made them: the
// Chat Completions wire of package onion does not send images (package
// openai does), so the images are asserted on the loop's requests.
type captured struct {
	*onion.Agent
	mu   sync.Mutex
	reqs []*loop.Request
}

func capturing(t *testing.T, s *oniontest.Server, items ...any) *captured {
	t.Helper()
	model := newAgent(t, s).LanguageModel()
	c := &captured{}
	a, err := onion.NewAgent("capturing", append([]any{onion.WithModel(onion.ModelFunc(
		func(ctx context.Context, req *loop.Request, onDelta func(loop.Delta)) (*loop.Response, error) {
			c.mu.Lock()
			c.reqs = append(c.reqs, req)
			c.mu.Unlock()
			return model.Generate(ctx, req, onDelta)
		}))}, items...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	c.Agent = a
	return c
}

func (c *captured) requests() []*loop.Request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*loop.Request(nil), c.reqs...)
}

// lastUser is the last user message of req.
func lastUserOf(t *testing.T, req *loop.Request) loop.Message {
	t.Helper()
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == loop.RoleUser {
			return req.Messages[i]
		}
	}
	t.Fatal("no user message")
	return loop.Message{}
}

type total struct {
	Total int `json:"total"`
}

// TestPromptImagesReachTheModel: every entry point sends the images
// WithImages put in its context with the prompt, as one user message; a
// conversation keeps them with the prompt and sends them again with the
// next turn.
func TestPromptImagesReachTheModel(t *testing.T) {
	red, blue := pngOf(t, 2, 2, color.RGBA{255, 0, 0, 255}), onion.Image{URL: "https://example.com/blue.jpg"}
	images := []onion.Image{red, blue}
	drain := func(seq func(func(onion.Event, error) bool)) error {
		var err error
		for _, e := range seq {
			if e != nil {
				err = e
			}
		}
		return err
	}
	for _, c := range []struct {
		name  string
		reply string
		run   func(ctx context.Context, a *onion.Agent, conv *onion.Conversation) error
	}{
		{"Agent.Run", "ok", func(ctx context.Context, a *onion.Agent, _ *onion.Conversation) error {
			_, err := a.Run(ctx, "what is this?")
			return err
		}},
		{"Agent.Input", "ok", func(ctx context.Context, a *onion.Agent, _ *onion.Conversation) error {
			_, err := a.Input(ctx, "what is this?")
			return err
		}},
		{"Agent.Stream", "ok", func(ctx context.Context, a *onion.Agent, _ *onion.Conversation) error {
			return drain(a.Stream(ctx, "what is this?"))
		}},
		{"Ask", `{"total":3}`, func(ctx context.Context, a *onion.Agent, _ *onion.Conversation) error {
			v, _, err := onion.Ask[total](ctx, a, "what is this?")
			if err == nil && v.Total != 3 {
				err = errors.New("wrong answer")
			}
			return err
		}},
		{"AskStream", `{"total":3}`, func(ctx context.Context, a *onion.Agent, _ *onion.Conversation) error {
			return drain(onion.AskStream[total](ctx, a, "what is this?"))
		}},
		{"Conversation.Run", "ok", func(ctx context.Context, _ *onion.Agent, conv *onion.Conversation) error {
			_, err := conv.Run(ctx, "what is this?")
			return err
		}},
		{"Conversation.Input", "ok", func(ctx context.Context, _ *onion.Agent, conv *onion.Conversation) error {
			_, err := conv.Input(ctx, "what is this?")
			return err
		}},
		{"Conversation.Stream", "ok", func(ctx context.Context, _ *onion.Agent, conv *onion.Conversation) error {
			return drain(conv.Stream(ctx, "what is this?"))
		}},
		{"AskIn", `{"total":3}`, func(ctx context.Context, _ *onion.Agent, conv *onion.Conversation) error {
			_, _, err := onion.AskIn[total](ctx, conv, "what is this?")
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := oniontest.NewServer(t, oniontest.Text(c.reply), oniontest.Text(c.reply))
			a := capturing(t, s)
			conv := a.NewConversation()
			if err := c.run(onion.WithImages(context.Background(), images...), a.Agent, conv); err != nil {
				t.Fatal(err)
			}
			reqs := a.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			if got := lastUserOf(t, reqs[0]); got.Content != "what is this?" || !reflect.DeepEqual(got.Images, images) {
				t.Errorf("the prompt reached the model as %q with %d images, want the text with both images", got.Content, len(got.Images))
			}
			// On the wire too: the text and both images in the last message.
			sent := s.Requests()
			if len(sent) != 1 {
				t.Fatalf("%d HTTP requests, want 1", len(sent))
			}
			last := sent[0].Body.Messages[len(sent[0].Body.Messages)-1]
			text := last.Content
			for _, p := range last.MultiContent {
				text += p.Text
			}
			if sent[0].Responses != nil {
				text = string(sent[0].Raw)
			}
			if !strings.Contains(text, "what is this?") || len(sent[0].Images()) != len(images) {
				t.Errorf("the HTTP request did not carry the prompt and its %d images: %q, %d images", len(images), text, len(sent[0].Images()))
			}
			if !strings.HasPrefix(c.name, "Conversation") && c.name != "AskIn" {
				return
			}
			// The next turn, without images, sends the first prompt's again.
			if _, err := conv.Run(context.Background(), "and now?"); err != nil {
				t.Fatal(err)
			}
			next := a.requests()[1]
			if first := next.Messages[1]; first.Content != "what is this?" || !reflect.DeepEqual(first.Images, images) {
				t.Errorf("the conversation kept the prompt as %q with %d images", first.Content, len(first.Images))
			}
			if got := lastUserOf(t, next); got.Images != nil {
				t.Errorf("the second prompt carries %d images, want none", len(got.Images))
			}
		})
	}
}

// TestPromptImagesStayWithTheirRun: a tool that runs an agent with the
// context it was given does not send the outer prompt's images again, and
// WithImages with none removes them.
func TestPromptImagesStayWithTheirRun(t *testing.T) {
	s := oniontest.NewServer(t, oniontest.Text("inner answer"))
	inner := capturing(t, s)
	ask := func(ctx context.Context, question string) (string, error) {
		return inner.Input(ctx, question)
	}
	tool, err := onion.NewTool(ask, onion.Name("ask"), onion.Description("asks another agent"), onion.Read, onion.NoApproval(), onion.ParamNames("question"))
	if err != nil {
		t.Fatal(err)
	}
	outer := capturing(t, oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("ask", `{"question":"look closer"}`)), oniontest.Text("done")), tool)
	if _, err := outer.Run(onion.WithImages(context.Background(), pngOf(t, 1, 1, color.White)), "go"); err != nil {
		t.Fatal(err)
	}
	if got := lastUserOf(t, inner.requests()[0]); got.Content != "look closer" || got.Images != nil {
		t.Errorf("the inner run's prompt %q carries %d images, want none", got.Content, len(got.Images))
	}
	if got := lastUserOf(t, outer.requests()[0]); len(got.Images) != 1 {
		t.Errorf("the outer prompt carries %d images, want 1", len(got.Images))
	}
	ctx := onion.WithImages(onion.WithImages(context.Background(), pngOf(t, 1, 1, color.White)))
	s.Add(oniontest.Text("plain"))
	if _, err := inner.Run(ctx, "plain"); err != nil {
		t.Fatal(err)
	}
	if got := lastUserOf(t, inner.requests()[1]); got.Images != nil {
		t.Errorf("after WithImages(ctx) with none, the prompt carries %d images", len(got.Images))
	}
}

// TestPromptImagesOverTheBounds: a prompt whose images break the bounds
// fails before any request, naming the image and the bound.
func TestPromptImagesOverTheBounds(t *testing.T) {
	many := make([]onion.Image, loop.MaxImages+1)
	for i := range many {
		many[i] = onion.Image{URL: "https://example.com/a.png"}
	}
	for _, c := range []struct {
		name   string
		images []onion.Image
		want   string
	}{
		{"too many", many, `onion: agent "capturing": the prompt's 21 images, over the limit of 20 in one message`},
		{"an SVG", []onion.Image{{MIMEType: "image/svg+xml", Data: []byte("<svg/>")}}, `the prompt's image 1: the MIME type "image/svg+xml" is not`},
		{"a text file", []onion.Image{{MIMEType: "image/png", Data: []byte("hello")}}, "image 1: its data is not a PNG, JPEG, GIF or WebP image"},
		{"both", []onion.Image{{MIMEType: "image/png", Data: pngOf(t, 1, 1, color.Black).Data, URL: "https://example.com/"}}, "image 1: it has both data and a URL"},
	} {
		s := oniontest.NewServer(t)
		a := capturing(t, s)
		_, err := a.Run(onion.WithImages(context.Background(), c.images...), "look")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
		if n := len(a.requests()); n != 0 {
			t.Errorf("%s: %d requests were sent", c.name, n)
		}
	}
}

type shooter struct{ shot onion.Image }

// Shot returns a picture.
func (s *shooter) Shot() onion.Image { return s.shot }

// Shots returns two pictures.
//
//onion:intent read
func (s *shooter) Shots() []onion.Image {
	return []onion.Image{s.shot, {URL: "https://example.com/second.png"}}
}

// Saved saves a picture and says where, showing it too.
func (s *shooter) Saved(ctx context.Context) (string, error) {
	onion.ShowImages(ctx, s.shot)
	return "saved to shots/home.png", nil
}

// Huge returns a picture too large for any model.
func (s *shooter) Huge() onion.Image {
	return onion.Image{MIMEType: "image/png", Data: append(append([]byte{}, s.shot.Data...), make([]byte, loop.MaxImageBytes)...)}
}

// TestToolImagesReachTheModel: a tool that returns an Image or []Image,
// or shows one with ShowImages, has its tool message carry them, its text
// led by a note of their type and size; events carry them, the Result
// does not; a tool whose images break the bounds fails, naming the tool.
func TestToolImagesReachTheModel(t *testing.T) {
	shot := pngOf(t, 3, 3, color.RGBA{0, 128, 0, 255})
	s := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("shot", "{}"), oniontest.Call("shots", "{}"), oniontest.Call("saved", "{}"), oniontest.Call("huge", "{}")),
		oniontest.Text("a green square"))
	a := capturing(t, s, &shooter{shot: shot}, onion.KeepToolHistory())
	conv := a.NewConversation()
	finished := map[string][]onion.Image{}
	for e, err := range conv.Stream(context.Background(), "take pictures") {
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == onion.EventToolFinished {
			finished[e.Call.Name] = e.Call.Images
		}
		if e.Kind == onion.EventDone {
			for _, c := range e.Result.ToolCalls {
				if c.Images != nil {
					t.Errorf("Result.ToolCalls[%s] keeps %d images", c.Name, len(c.Images))
				}
			}
		}
	}
	size := len(shot.Data)
	want := map[string]struct {
		content string
		images  []onion.Image
	}{
		"shot":  {"[1 image follows: image/png, " + strconv.Itoa(size) + " bytes]", []onion.Image{shot}},
		"shots": {"[2 images follow: 1. image/png, " + strconv.Itoa(size) + " bytes; 2. an image at a URL]", []onion.Image{shot, {URL: "https://example.com/second.png"}}},
		"saved": {"[1 image follows: image/png, " + strconv.Itoa(size) + " bytes]\nsaved to shots/home.png", []onion.Image{shot}},
		"huge":  {`error: the tool "huge" returned images the model cannot be shown: image 1: it is 20.0 MiB, over the limit of 20.0 MiB`, nil},
	}
	reqs := a.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for _, m := range reqs[1].Messages {
		if m.Role != loop.RoleTool {
			continue
		}
		w := want[m.Name]
		if m.Content != w.content || !reflect.DeepEqual(m.Images, w.images) {
			t.Errorf("tool message of %s: %q with %d images, want %q with %d", m.Name, m.Content, len(m.Images), w.content, len(w.images))
		}
		if !reflect.DeepEqual(finished[m.Name], w.images) {
			t.Errorf("EventToolFinished of %s carries %d images, want %d", m.Name, len(finished[m.Name]), len(w.images))
		}
		delete(want, m.Name)
	}
	if len(want) > 0 {
		t.Errorf("no tool message for %v", want)
	}
	// The HTTP request carried the texts the model reads of each.
	if got := toolMessages(t, s, 1); len(got) != 4 {
		t.Errorf("the HTTP request carried %d tool results, want 4", len(got))
	}
	// The history keeps the images, and survives JSON.
	saved, err := conv.MarshalHistory()
	if err != nil {
		t.Fatal(err)
	}
	restored := a.NewConversation()
	if err := restored.UnmarshalHistory(saved); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(restored.History(), conv.History()) {
		t.Errorf("the history changed through JSON")
	}
	n := 0
	for _, m := range restored.History() {
		n += len(m.Images)
	}
	if n != 4 {
		t.Errorf("the restored history holds %d images, want 4", n)
	}
}

// TestRunCallKeepsToolImages: RunCall, the path mcpserver and other
// runtimes take, returns the images with the call; Tool.Call returns
// their note; an image result has no output schema.
func TestRunCallKeepsToolImages(t *testing.T) {
	shot := pngOf(t, 1, 1, color.Black)
	tools, err := onion.ToolsFrom(&shooter{shot: shot})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*onion.Tool{}
	for _, tl := range tools {
		byName[tl.Name()] = tl
	}
	tc := drive.RunCall(context.Background(), byName["saved"], onion.Call{ID: "c1", Arguments: []byte("{}")}, drive.CallConfig{})
	if tc.Outcome != onion.Succeeded || !reflect.DeepEqual(tc.Images, []onion.Image{shot}) || !strings.HasSuffix(tc.Output, "]\nsaved to shots/home.png") {
		t.Errorf("RunCall: %s %q with %d images", tc.Outcome, tc.Output, len(tc.Images))
	}
	text, err := byName["shot"].Call(context.Background(), "{}")
	if err != nil || text != loop.ImageNote([]onion.Image{shot}) {
		t.Errorf("Tool.Call = %q, %v; want the image's note", text, err)
	}
	for _, name := range []string{"shot", "shots"} {
		if s, err := byName[name].OutputSchema(); s != nil || err != nil {
			t.Errorf("%s: OutputSchema = %s, %v; want none", name, s, err)
		}
	}
	// Outside a tool call ShowImages does nothing.
	onion.ShowImages(context.Background(), shot)
}

// TestUnmarshalHistoryRefusesHostileImages: a history restored from
// outside may carry images only on prompts and tool results, within the
// bounds, of the types the bytes really are.
func TestUnmarshalHistoryRefusesHostileImages(t *testing.T) {
	a := capturing(t, oniontest.NewServer(t))
	img := `{"mime_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg=="}`
	many := strings.TrimSuffix(strings.Repeat(img+",", 21), ",")
	huge := `{"mime_type":"image/gif","data":"R0lGODlh` + strings.Repeat("A", (loop.MaxImageBytes/3)*4) + `"}`
	for _, c := range []struct {
		name, history, want string // want "" for none
	}{
		{"a prompt's image", `[{"role":"user","content":"look","images":[` + img + `]},{"role":"assistant","content":"a dot"}]`, ""},
		{"a URL", `[{"role":"user","images":[{"url":"https://example.com/a.webp","mime_type":"image/webp"}]}]`, ""},
		{"a tool's image", `[{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"c1","name":"shot","arguments":"{}"}]},` +
			`{"role":"tool","tool_call_id":"c1","name":"shot","content":"[1 image follows]","images":[` + img + `]}]`, ""},
		{"on an assistant message", `[{"role":"user","content":"go"},{"role":"assistant","content":"here","images":[` + img + `]}]`,
			"message 1 has the role assistant and carries images: only a prompt (user) or a tool result does"},
		{"too many", `[{"role":"user","images":[` + many + `]}]`, "message 0: 21 images, over the limit of 20"},
		{"too large", `[{"role":"user","images":[` + huge + `]}]`, "message 0: image 1: it is 20.0 MiB, over the limit of 20.0 MiB"},
		{"an HTML page", `[{"role":"user","images":[{"mime_type":"text/html","data":"PHNjcmlwdD4="}]}]`, `message 0: image 1: the MIME type "text/html" is not`},
		{"a lie", `[{"role":"user","images":[{"mime_type":"image/jpeg","data":"iVBORw0KGgo="}]}]`, "its MIME type is image/jpeg, but its data is image/png"},
		{"both", `[{"role":"user","images":[{"mime_type":"image/png","data":"iVBORw0KGgo=","url":"https://example.com/"}]}]`, "it has both data and a URL"},
		{"neither", `[{"role":"user","images":[{}]}]`, "image 1: it has neither data nor a URL"},
		{"a file URL", `[{"role":"user","images":[{"url":"file:///etc/shadow"}]}]`, "its URL is not http or https"},
	} {
		conv := a.NewConversation()
		err := conv.UnmarshalHistory([]byte(c.history))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		case c.want != "" && len(conv.History()) != 0:
			t.Errorf("%s: the refused history was kept", c.name)
		}
	}
}

// FuzzUnmarshalHistoryImages restores histories with images the fuzzer
// writes and holds what is accepted to the bounds: images only on user
// and tool messages, each message's images passing loop.CheckImages.
func FuzzUnmarshalHistoryImages(f *testing.F) {
	f.Add([]byte(`[{"role":"user","content":"look","images":[{"mime_type":"image/png","data":"iVBORw0KGgo="}]}]`))
	f.Add([]byte(`[{"role":"user","images":[{"url":"https://example.com/a.png"},{"mime_type":"image/gif","data":"R0lGODlh"}]}]`))
	f.Add([]byte(`[{"role":"assistant","images":[{"url":"http://x/"}]}]`))
	f.Add([]byte(`[{"role":"user","images":[{"mime_type":"image/webp","data":"UklGRgAAAABXRUJQVlA4IA=="},{"url":"data:image/png,x"}]}]`))
	f.Add([]byte(`[{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"c","name":"t","arguments":"{}"}]},{"role":"tool","tool_call_id":"c","images":[{"mime_type":"image/jpeg","data":"/9j/"}]}]`))
	a, err := onion.NewAgent("fuzz")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		conv := a.NewConversation()
		if conv.UnmarshalHistory(data) != nil {
			return
		}
		for i, m := range conv.History() {
			if len(m.Images) == 0 {
				continue
			}
			if m.Role != onion.RoleUser && m.Role != onion.RoleTool {
				t.Fatalf("message %d (%s) kept %d images", i, m.Role, len(m.Images))
			}
			if err := loop.CheckImages(m.Images); err != nil {
				t.Fatalf("message %d: accepted images that fail the check: %v", i, err)
			}
		}
	})
}

// TestImageConstructors: ImageData reads the type from the bytes,
// ImageFile reads only a regular file within the bound, ImageURL takes
// only an http(s) URL; each error says what is wrong.
func TestImageConstructors(t *testing.T) {
	dot := pngOf(t, 1, 1, color.Black)
	if dot.MIMEType != "image/png" {
		t.Errorf("ImageData of a PNG: type %q", dot.MIMEType)
	}
	if _, err := onion.ImageData([]byte("%PDF-1.7")); err == nil || err.Error() != "onion.ImageData: 8 bytes that are not a PNG, JPEG, GIF or WebP image (they begin 25 50 44 46 2d 31 2e 37)" {
		t.Errorf("ImageData of a PDF: %v", err)
	}
	huge := append(append([]byte{}, dot.Data...), make([]byte, loop.MaxImageBytes)...)
	if _, err := onion.ImageData(huge); err == nil || !strings.HasPrefix(err.Error(), "onion.ImageData: it is 20.0 MiB, over the limit of 20.0 MiB") {
		t.Errorf("ImageData of too much: %v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "dot.png")
	if err := os.WriteFile(file, dot.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	if img, err := onion.ImageFile(file); err != nil || !reflect.DeepEqual(img, dot) {
		t.Errorf("ImageFile: %+v, %v", img, err)
	}
	big := filepath.Join(dir, "big.png")
	if err := os.WriteFile(big, dot.Data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, loop.MaxImageBytes+1); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.png")
	if err := os.WriteFile(text, []byte("not a picture"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.png")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		dir:                     "it is a directory, not a regular file",
		fifo:                    "it is a named pipe, not a regular file",
		big:                     "the file is 20971521 bytes, over the limit of 20971520",
		empty:                   "the file is empty",
		text:                    "notes.png: 13 bytes that are not a PNG, JPEG, GIF or WebP image (they begin 6e 6f 74",
		filepath.Join(dir, "x"): "no such file",
	} {
		if _, err := onion.ImageFile(path); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ImageFile(%s): %v, want an error containing %q", filepath.Base(path), err, want)
		}
	}
	if img, err := onion.ImageURL("https://example.com/a.png"); err != nil || img.URL != "https://example.com/a.png" {
		t.Errorf("ImageURL: %+v, %v", img, err)
	}
	for url, want := range map[string]string{
		"":                                 "the URL is empty",
		"javascript:alert(1)":              "not http or https",
		"https://key:sk-secret@host/a.png": "user name or password",
		"data:image/png;base64,iVBOR":      "give the bytes as Data",
	} {
		_, err := onion.ImageURL(url)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("ImageURL(%q): %v, want an error containing %q and no secret", url, err, want)
		}
	}
}
