package devserver_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/temporal"
	"github.com/onionkit/onion/temporal/internal/testagent"
)

// pngImage is a w×h PNG of noise, which does not compress.
func pngImage(t *testing.T, w, h int) onion.Image {
	t.Helper()
	m := image.NewGray(image.Rect(0, 0, w, h))
	x := uint32(1)
	for i := range m.Pix {
		x = x*1664525 + 1013904223
		m.Pix[i] = byte(x >> 24)
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

// TestDurableRunWithPromptImages: the images onion.WithImages puts in the
// context of temporal.Start go with the prompt, to every model request of
// the run, and stay in its conversation; images over the payload limit,
// or not images at all, are refused before any run starts.
func TestDurableRunWithPromptImages(t *testing.T) {
	_, model, c := crashSetup(t, oniontest.ToolCalls(oniontest.Call("stock", `{"SKU":"A1"}`)), oniontest.Text("3 boxes."))
	serveAgent(t, c, model, "images", func(ctx context.Context, tool string) (string, error) { return "3", nil })
	img := pngImage(t, 8, 8)
	ctx := onion.WithImages(context.Background(), img)
	run, err := temporal.Start(ctx, c, "images", testagent.Name, "How many boxes are in this picture?", temporal.WorkflowID("images"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := temporal.Result(context.Background(), run)
	if err != nil || res.Output != "3 boxes." {
		t.Fatalf("result %+v, %v", res, err)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(img.Data)
		if got := r.Images(); len(got) != 1 || got[0].URL != want || got[0].Role != "user" {
			t.Errorf("model request %d carried %d images, want the prompt's", i+1, len(got))
		}
	}
	conv, err := temporal.Conversation(context.Background(), c, "images")
	if err != nil {
		t.Fatal(err)
	}
	var p onion.Message
	for _, m := range conv {
		if m.Role == onion.RoleUser {
			p = m
			break
		}
	}
	if p.Content != "How many boxes are in this picture?" || len(p.Images) != 1 || !bytes.Equal(p.Images[0].Data, img.Data) {
		t.Errorf("the conversation's prompt is %q with %d images", p.Content, len(p.Images))
	}

	// Over the 2 MB a payload may carry (each image is under onion's own
	// bound): refused, naming what is too large.
	big := onion.WithImages(context.Background(), pngImage(t, 1100, 1100), pngImage(t, 1100, 1100))
	if _, err := temporal.Start(big, c, "images", testagent.Name, "And these?"); err == nil || !strings.Contains(err.Error(), "the prompt with its images and history is") {
		t.Errorf("Start with 2.4 MB of images: %v", err)
	}
	bad := onion.WithImages(context.Background(), onion.Image{MIMEType: "image/png", Data: []byte("not a png")})
	if _, err := temporal.Start(bad, c, "images", testagent.Name, "And this?"); err == nil || !strings.Contains(err.Error(), "the prompt's image 1") {
		t.Errorf("Start with an image that is none: %v", err)
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("%d model requests after the refused starts, want 2", n)
	}
}
