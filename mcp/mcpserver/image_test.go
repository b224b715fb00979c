package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/onionkit/onion"
	"github.com/onionkit/onion/mcp/mcpserver"
)

// dot is a real 1×1 PNG.
func dot(t *testing.T) onion.Image {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 1, 1))); err != nil {
		t.Fatal(err)
	}
	img, err := onion.ImageData(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return img
}

type camera struct{ shot onion.Image }

// Shot takes a picture.
//
//onion:intent read
func (c *camera) Shot() onion.Image { return c.shot }

// Album returns a picture and one at a URL.
//
//onion:intent read
func (c *camera) Album() []onion.Image {
	return []onion.Image{c.shot, {URL: "https://example.com/b.png", MIMEType: "image/png"}}
}

// Save saves a picture and says where, showing it.
func (c *camera) Save(ctx context.Context) (string, error) {
	onion.ShowImages(ctx, c.shot)
	return "saved to home.png", nil
}

// Frame describes a picture and shows it.
//
//onion:intent read
func (c *camera) Frame(ctx context.Context) (frame, error) {
	onion.ShowImages(ctx, c.shot)
	return frame{Width: 1, Height: 1}, nil
}

type frame struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// TestImagesServedAsImageContent: the official SDK's client, over the
// in-memory and the streamable HTTP transports, gets a tool's images as
// image content (mimeType and base64 data, after the tool's own text,
// without onion's note), an image at a URL as a resource link, no output
// schema for a tool whose result is an image, and a struct result's
// structuredContent beside the images it showed.
func TestImagesServedAsImageContent(t *testing.T) {
	shot := dot(t)
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) {
			cs := connectTo(t, transport, &camera{shot: shot})
			ctx := context.Background()
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tl := range list.Tools {
				if (tl.Name == "shot" || tl.Name == "album") && tl.OutputSchema != nil {
					t.Errorf("%s declares an output schema: %v", tl.Name, tl.OutputSchema)
				}
			}
			call := func(name string) *mcp.CallToolResult {
				t.Helper()
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError {
					t.Fatalf("%s failed: %v", name, res.Content)
				}
				return res
			}
			image := &mcp.ImageContent{MIMEType: "image/png", Data: shot.Data}
			for name, want := range map[string][]mcp.Content{
				"shot":  {image},
				"album": {image, &mcp.ResourceLink{URI: "https://example.com/b.png", Name: "image 2", MIMEType: "image/png"}},
				"save":  {&mcp.TextContent{Text: "saved to home.png"}, image},
				"frame": {&mcp.TextContent{Text: `{"width":1,"height":1}`}, image},
			} {
				res := call(name)
				if !reflect.DeepEqual(res.Content, want) {
					got, _ := json.Marshal(res.Content)
					t.Errorf("%s: content %s", name, got)
				}
				wire, _ := json.Marshal(res)
				for _, part := range []string{`"type":"image"`, `"mimeType":"image/png"`, `"data":"iVBORw0KGgo`} {
					if !bytes.Contains(wire, []byte(part)) {
						t.Errorf("%s: %s is not on the wire: %s", name, part, wire)
					}
				}
			}
			if s, _ := json.Marshal(call("frame").StructuredContent); string(s) != `{"height":1,"width":1}` {
				t.Errorf("frame: structuredContent %s", s)
			}
		})
	}
}

// connectTo returns an SDK client session of a server of items, reached
// over the named transport, closed when the test ends.
func connectTo(t *testing.T, transport string, items ...any) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	var ct mcp.Transport
	switch transport {
	case "memory":
		srv, err := mcpserver.New(items...)
		if err != nil {
			t.Fatal(err)
		}
		st, cht := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close(); ss.Wait() })
		ct = cht
	case "http":
		h, err := mcpserver.Handler(items...)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		ct = &mcp.StreamableClientTransport{Endpoint: hs.URL}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("connect over %s: %v", transport, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestTooLargeImageIsAnError: a tool whose image is over the bounds ends
// as an isError result naming the tool, with no image content.
func TestTooLargeImageIsAnError(t *testing.T) {
	big := dot(t)
	big.Data = append(big.Data, make([]byte, 20<<20)...)
	cs := connectTo(t, "memory", &camera{shot: big})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "shot", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || len(res.Content) != 1 {
		t.Fatalf("isError %v, %d contents", res.IsError, len(res.Content))
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `the tool "shot" returned images the model cannot be shown: image 1: it is 20.0 MiB, over the limit of 20.0 MiB`) {
		t.Errorf("text %q", text)
	}
}
