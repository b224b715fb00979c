package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/drive"
	"github.com/onionkit/onion/loop"
	"github.com/onionkit/onion/mcp/mcpclient"
	"github.com/onionkit/onion/mcp/mcpserver"
	"github.com/onionkit/onion/oniontest"
)

func encoded(t *testing.T, encode func(*bytes.Buffer, image.Image) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := encode(&b, image.NewGray(image.Rect(0, 0, 2, 2))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// imageTools are the tools of a server built with the SDK alone, reached
// over the named transport, whose results hold image content.
func imageTools(t *testing.T, transport string, results map[string]*mcp.CallToolResult) []*onion.Tool {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "pictures", Version: "v0"}, nil)
	for name, res := range results {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return res, nil })
	}
	ctx := context.Background()
	var (
		tools []*onion.Tool
		err   error
	)
	switch transport {
	case "memory":
		st, ct := mcp.NewInMemoryTransports()
		ss, cerr := srv.Connect(ctx, st, nil)
		if cerr != nil {
			t.Fatal(cerr)
		}
		t.Cleanup(func() { ss.Close(); ss.Wait() })
		tools, err = mcpclient.Tools(ctx, ct)
	case "http":
		hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
		t.Cleanup(hs.Close)
		tools, err = mcpclient.HTTP(ctx, hs.URL)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeTools(tools) })
	return tools
}

// TestImageContentReachesTheModel: an MCP server's image content, over
// the SDK's in-memory and streamable HTTP transports, reaches the model
// as images on the tool message, led by onion's note; an image the model
// cannot be shown (an SVG, bytes not of their stated type, one past the
// bounds) is described in brackets as before. Outside a run, where no
// model is shown images, every image is described.
func TestImageContentReachesTheModel(t *testing.T) {
	pngData := encoded(t, func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) })
	jpegData := encoded(t, func(b *bytes.Buffer, m image.Image) error { return jpeg.Encode(b, m, nil) })
	pic := &mcp.ImageContent{MIMEType: "image/png", Data: pngData}
	flood := make([]mcp.Content, loop.MaxImages+2)
	for i := range flood {
		flood[i] = pic
	}
	results := map[string]*mcp.CallToolResult{
		"shot":  {Content: []mcp.Content{pic}},
		"page":  {Content: []mcp.Content{&mcp.TextContent{Text: "the page"}, &mcp.ImageContent{MIMEType: "image/jpeg", Data: jpegData}}},
		"svg":   {Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/svg+xml", Data: []byte("<svg/>")}}},
		"lie":   {Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png", Data: jpegData}}},
		"flood": {Content: flood},
	}
	png1 := onion.Image{MIMEType: "image/png", Data: pngData}
	n, nj := strconv.Itoa(len(pngData)), strconv.Itoa(len(jpegData))
	floodNote := "[22 images follow: "
	var floodImages []onion.Image
	for i := range loop.MaxImages {
		floodImages = append(floodImages, png1)
		if i > 0 {
			floodNote += "; "
		}
		floodNote += strconv.Itoa(i+1) + ". image/png, " + n + " bytes"
	}
	floodNote = strings.Replace(floodNote, "22", "20", 1) + "]\n[image: image/png, " + n + " bytes, not shown]\n\n[image: image/png, " + n + " bytes, not shown]"
	want := map[string]struct {
		content string
		images  []onion.Image
	}{
		"shot":  {"[1 image follows: image/png, " + n + " bytes]", []onion.Image{png1}},
		"page":  {"[1 image follows: image/jpeg, " + nj + " bytes]\nthe page", []onion.Image{{MIMEType: "image/jpeg", Data: jpegData}}},
		"svg":   {"[image: image/svg+xml, 6 bytes, not shown]", nil},
		"lie":   {"[image: image/png, " + nj + " bytes, not shown]", nil},
		"flood": {floodNote, floodImages},
	}
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			tools := imageTools(t, transport, results)
			s := oniontest.NewServer(t, oniontest.ToolCalls(oniontest.Call("shot", "{}"), oniontest.Call("page", "{}"),
				oniontest.Call("svg", "{}"), oniontest.Call("lie", "{}"), oniontest.Call("flood", "{}")), oniontest.Text("seen"))
			reqs := runCapturing(t, s, tools)
			if len(reqs) != 2 {
				t.Fatalf("%d requests, want 2", len(reqs))
			}
			seen := 0
			for _, m := range reqs[1].Messages {
				if m.Role != loop.RoleTool {
					continue
				}
				seen++
				w := want[m.Name]
				if m.Content != w.content || !reflect.DeepEqual(m.Images, w.images) {
					t.Errorf("%s: %q with %d images, want %q with %d", m.Name, m.Content, len(m.Images), w.content, len(w.images))
				}
			}
			if seen != len(want) {
				t.Errorf("%d tool messages, want %d", seen, len(want))
			}
			for _, tl := range tools {
				if tl.Name() != "page" {
					continue
				}
				text, err := tl.Call(context.Background(), "{}")
				if want := "the page\n\n[image: image/jpeg, " + nj + " bytes, not shown]"; err != nil || text != want {
					t.Errorf("page called outside a run: %q, %v; want %q", text, err, want)
				}
			}
		})
	}
}

// runCapturing runs an agent of tools whose model requests go over HTTP to
// s and returns them as the loop made them: the Chat Completions wire of
// package onion does not send images (package openai does).
func runCapturing(t *testing.T, s *oniontest.Server, tools []*onion.Tool) []*loop.Request {
	t.Helper()
	wire, err := onion.NewAgent("wire", onion.BaseURL(s.URL()), onion.APIKey("test-key"))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		reqs []*loop.Request
	)
	agent, err := onion.NewAgent("viewer", tools, onion.WithModel(onion.ModelFunc(
		func(ctx context.Context, req *loop.Request, onDelta func(loop.Delta)) (*loop.Response, error) {
			mu.Lock()
			reqs = append(reqs, req)
			mu.Unlock()
			return wire.LanguageModel().Generate(ctx, req, onDelta)
		})))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Run(context.Background(), "look"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return reqs
}

type camera struct{ shot onion.Image }

// Shot takes a picture.
//
//onion:intent read
func (c *camera) Shot() onion.Image { return c.shot }

// Save saves a picture and says where, showing it.
func (c *camera) Save(ctx context.Context) (string, error) {
	onion.ShowImages(ctx, c.shot)
	return "saved to home.png", nil
}

// TestImagesRoundTrip: an onion tool's images, served by mcpserver and
// taken back by mcpclient, read exactly as the local tool's: the same
// text and the same images.
func TestImagesRoundTrip(t *testing.T) {
	shot, err := onion.ImageData(encoded(t, func(b *bytes.Buffer, m image.Image) error { return png.Encode(b, m) }))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(&camera{shot: shot})
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close(); ss.Wait() })
	remote, err := mcpclient.Tools(context.Background(), ct)
	if err != nil {
		t.Fatal(err)
	}
	defer closeTools(remote)
	local, err := onion.ToolsFrom(&camera{shot: shot})
	if err != nil {
		t.Fatal(err)
	}
	l, r := toolMap(local), toolMap(remote)
	for _, name := range []string{"shot", "save"} {
		call := onion.Call{ID: "c1", Arguments: json.RawMessage("{}")}
		lc := drive.RunCall(context.Background(), l[name], call, drive.CallConfig{})
		rc := drive.RunCall(context.Background(), r[name], call, drive.CallConfig{})
		if rc.Outcome != onion.Succeeded || rc.Output != lc.Output || !reflect.DeepEqual(rc.Images, lc.Images) || len(lc.Images) != 1 {
			t.Errorf("%s: remote (%s, %q, %d images), local (%s, %q, %d images)", name, rc.Outcome, rc.Output, len(rc.Images), lc.Outcome, lc.Output, len(lc.Images))
		}
	}
}
