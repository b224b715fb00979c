package loop_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/onionkit/onion/loop"
)

// Smallest files of each format, as their first bytes: enough for
// ImageType, which is all the loop reads of them.
var (
	pngData  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	jpegData = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00")
	gifData  = []byte("GIF89a\x01\x00\x01\x00")
	webpData = []byte("RIFF\x24\x00\x00\x00WEBPVP8 ")
)

func png(n int) loop.Image {
	return loop.Image{MIMEType: "image/png", Data: append(append([]byte{}, pngData...), make([]byte, max(n-len(pngData), 0))...)}
}

func TestImageType(t *testing.T) {
	for data, want := range map[string]string{
		string(pngData): "image/png", string(jpegData): "image/jpeg", string(gifData): "image/gif",
		string(webpData): "image/webp", "GIF87a": "image/gif", "RIFF\x00\x00\x00\x00WAVEfmt ": "",
		"<svg xmlns=": "", "BM\x00\x00": "", "": "", "\x89PN": "",
	} {
		if got := loop.ImageType([]byte(data)); got != want {
			t.Errorf("ImageType(%q) = %q, want %q", data, got, want)
		}
	}
}

func TestCheckImages(t *testing.T) {
	many := make([]loop.Image, loop.MaxImages+1)
	for i := range many {
		many[i] = png(20)
	}
	half := png(loop.MaxImageBytes/2 + 1)
	for _, c := range []struct {
		name   string
		images []loop.Image
		want   string // "" for none
	}{
		{"none", nil, ""},
		{"each format", []loop.Image{png(20), {MIMEType: "image/jpeg", Data: jpegData},
			{MIMEType: "image/gif", Data: gifData}, {MIMEType: "image/webp", Data: webpData}}, ""},
		{"a URL", []loop.Image{{URL: "https://example.com/a.png?sig=abc"}}, ""},
		{"a URL with its type", []loop.Image{{URL: "http://example.com/a", MIMEType: "image/jpeg"}}, ""},
		{"the most", many[:loop.MaxImages], ""},
		{"the largest", []loop.Image{png(loop.MaxImageBytes)}, ""},
		{"too many", many, "21 images, over the limit of 20"},
		{"too large", []loop.Image{png(loop.MaxImageBytes + 1)}, "image 1: it is 20.0 MiB, over the limit of 20.0 MiB"},
		{"too large together", []loop.Image{half, half}, "images 1 to 2 are 20.0 MiB together, over the limit"},
		{"both", []loop.Image{{MIMEType: "image/png", Data: pngData, URL: "https://example.com/a.png"}}, "image 1: it has both data and a URL"},
		{"neither", []loop.Image{png(20), {MIMEType: "image/png"}}, "image 2: it has neither data nor a URL"},
		{"an SVG", []loop.Image{{MIMEType: "image/svg+xml", Data: []byte("<svg/>")}}, `the MIME type "image/svg+xml" is not image/png, image/jpeg, image/gif or image/webp`},
		{"a huge type", []loop.Image{{MIMEType: strings.Repeat("x", 5000), URL: "https://example.com/"}}, "(5000 bytes)"},
		{"not an image", []loop.Image{{MIMEType: "image/png", Data: []byte("#!/bin/sh\nrm -rf /")}}, "its data is not a PNG, JPEG, GIF or WebP image: it begins 23 21 2f 62"},
		{"a JPEG called PNG", []loop.Image{{MIMEType: "image/png", Data: jpegData}}, "its MIME type is image/png, but its data is image/jpeg"},
		{"no type", []loop.Image{{Data: pngData}}, "it has no MIME type; its data is image/png"},
		{"a data URL", []loop.Image{{URL: "data:image/png;base64,iVBOR"}}, "a data: URL; give the bytes as Data"},
		{"a file URL", []loop.Image{{URL: "file:///etc/passwd"}}, "its URL is not http or https"},
		{"no host", []loop.Image{{URL: "https:///a.png"}}, "its URL has no host"},
		{"a password", []loop.Image{{URL: "https://u:secret@example.com/a.png"}}, "user name or password"},
		{"a newline", []loop.Image{{URL: "https://example.com/a\nb"}}, "a space or a control character"},
		{"a long URL", []loop.Image{{URL: "https://example.com/" + strings.Repeat("a", 9000)}}, "its URL is 8.8 KiB, over the limit of 8.0 KiB"},
	} {
		err := loop.CheckImages(c.images)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		case err != nil && strings.Contains(err.Error(), "secret"):
			t.Errorf("%s: the error %q quotes the URL", c.name, err)
		}
	}
}

func TestImageNote(t *testing.T) {
	for _, c := range []struct {
		images []loop.Image
		want   string
	}{
		{nil, ""},
		{[]loop.Image{png(2048)}, "[1 image follows: image/png, 2.0 KiB]"},
		{[]loop.Image{png(100), {URL: "https://example.com/a"}, {MIMEType: "image/jpeg", Data: make([]byte, 3<<20)}},
			"[3 images follow: 1. image/png, 100 bytes; 2. an image at a URL; 3. image/jpeg, 3.0 MiB]"},
	} {
		if got := loop.ImageNote(c.images); got != c.want {
			t.Errorf("ImageNote = %q, want %q", got, c.want)
		}
	}
}

// TestPromptAndToolImagesReachTheModel: a prompt's images are on its user
// message in every request; a tool's images are on its tool message, led
// by their note, and not in Result.Calls; the State in between survives
// JSON, and the run goes on from the decoded copy exactly as from the
// original.
func TestPromptAndToolImagesReachTheModel(t *testing.T) {
	l := testLoop(t, nil)
	prompt := loop.Message{Content: "what is on these?", Images: []loop.Image{png(64), {URL: "https://example.com/b.jpg"}}}
	st, effects := l.StartPrompt("r1", 1, nil, prompt, nil)
	req := effects[len(effects)-1].Request
	if got := req.Messages[1]; got.Role != loop.RoleUser || got.Content != prompt.Content || !reflect.DeepEqual(got.Images, prompt.Images) {
		t.Fatalf("first request's prompt %+v, want %+v", got, prompt)
	}
	r := &run{t: t, l: l, st: st, now: t0}
	r.reply("read {}")
	shot := png(1500)
	if _, err := l.Step(st, loop.Input{Now: t0, Done: &loop.Done{CallID: st.Calls[0].ID, Output: "the page", Images: []loop.Image{shot}}}); err != nil {
		t.Fatal(err)
	}
	saved, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var restored loop.State
	if err := json.Unmarshal(saved, &restored); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&restored, st) {
		t.Fatalf("the State changed through JSON:\n%s", saved)
	}
	next := l.Pending(&restored)[0].Request
	if want := l.Pending(st)[0].Request; !reflect.DeepEqual(next, want) {
		t.Fatalf("the decoded State asks\n%+v\nthe original\n%+v", next, want)
	}
	tool := next.Messages[len(next.Messages)-1]
	if tool.Role != loop.RoleTool || tool.Content != "[1 image follows: image/png, 1.5 KiB]\nthe page" || !reflect.DeepEqual(tool.Images, []loop.Image{shot}) {
		t.Errorf("tool message %q with %d images", tool.Content, len(tool.Images))
	}
	if !reflect.DeepEqual(next.Messages[1].Images, prompt.Images) {
		t.Errorf("the second request lost the prompt's images")
	}
	if imgs := restored.Result.Calls[0].Images; imgs != nil {
		t.Errorf("Result.Calls keeps %d images, want none", len(imgs))
	}
	if !bytes.Contains(saved, []byte(`"mime_type":"image/png","data":"iVBORw0KGgo`)) {
		t.Errorf("the State's JSON does not carry the image as base64:\n%.300s", saved)
	}
}

// TestToolImagesOverTheBoundsFailTheCall: a tool whose images break the
// bounds fails, its error naming the tool and the image, and the model is
// sent none of them.
func TestToolImagesOverTheBoundsFailTheCall(t *testing.T) {
	for _, c := range []struct {
		name   string
		images []loop.Image
		want   string
	}{
		{"too large", []loop.Image{png(20), png(loop.MaxImageBytes + 1)}, `the tool "read" returned images the model cannot be shown: image 2: it is 20.0 MiB`},
		{"too many", make([]loop.Image, 21), `the tool "read" returned images the model cannot be shown: 21 images`},
		{"a script", []loop.Image{{MIMEType: "image/svg+xml", Data: []byte("<svg onload=alert(1)>")}}, `image 1: the MIME type "image/svg+xml"`},
	} {
		l := testLoop(t, func(c *loop.Config) { c.MaxOutput = 64 << 10 })
		r, _ := start(t, l)
		r.reply("read {}")
		r.step(loop.Input{Done: &loop.Done{CallID: r.st.Calls[0].ID, Output: "x", Images: c.images}})
		res := r.st.Result.Calls[0]
		if res.Outcome != loop.Failed || !strings.Contains(res.Error, c.want) || !strings.Contains(res.Output, c.want) {
			t.Errorf("%s: outcome %s, error %q, output %q; want failed with %q", c.name, res.Outcome, res.Error, res.Output, c.want)
		}
		if m := r.st.Messages[len(r.st.Messages)-1]; m.Role != loop.RoleTool || m.Images != nil {
			t.Errorf("%s: the tool message carries %d images", c.name, len(m.Images))
		}
	}
}

// TestJoinedUserMessagesKeepTheirImages: two user messages in a row are
// sent as one, with the images of both in order, and the state's own
// messages are left as they were.
func TestJoinedUserMessagesKeepTheirImages(t *testing.T) {
	l := testLoop(t, nil)
	a, b := png(10), loop.Image{URL: "https://example.com/b.png"}
	first := make([]loop.Image, 1, 4) // room to append in place: it must not be
	first[0] = a
	history := []loop.Message{{Role: loop.RoleUser, Content: "one", Images: first}}
	st, effects := l.StartPrompt("r", 1, history, loop.Message{Content: "two", Images: []loop.Image{b}}, nil)
	msgs := effects[len(effects)-1].Request.Messages
	if len(msgs) != 2 || msgs[1].Content != "one\n\ntwo" || !reflect.DeepEqual(msgs[1].Images, []loop.Image{a, b}) {
		t.Fatalf("request messages %+v", msgs)
	}
	if got := st.Messages[0].Images; len(got) != 1 || first[:2][1].URL != "" {
		t.Errorf("the history's first message was changed: %d images", len(got))
	}
}

// TestCompactionLeavesOlderToolImagesOut: an older tool result's images
// count in the estimate and go with its text when it becomes a note.
func TestCompactionLeavesOlderToolImagesOut(t *testing.T) {
	l := testLoop(t, func(c *loop.Config) { c.CompactAfter = 1000; c.CompactStrategy = loop.CompactToolResults })
	history := []loop.Message{
		{Role: loop.RoleUser, Content: "look"},
		{Role: loop.RoleAssistant, ToolCalls: []loop.ToolRequest{{ID: "c1", Name: "read", Arguments: "{}"}}},
		{Role: loop.RoleTool, ToolCallID: "c1", Name: "read", Content: "[1 image follows: image/png, 20 bytes]", Images: []loop.Image{png(20)}},
		{Role: loop.RoleAssistant, Content: "a cat"},
	}
	if n := loop.EstimateTokens(&loop.Request{Messages: history}); n < 1600 {
		t.Errorf("EstimateTokens of a message with an image = %d, want at least 1600", n)
	}
	st, effects := l.Start("r", 1, history, "and now?")
	if len(st.Result.Compactions) != 1 {
		t.Fatalf("compactions %+v, want one", st.Result.Compactions)
	}
	tool := effects[len(effects)-1].Request.Messages[3]
	if tool.Images != nil || !strings.HasPrefix(tool.Content, "[tool result of read") {
		t.Errorf("compacted tool message %q keeps %d images", tool.Content, len(tool.Images))
	}
}

// FuzzCheckImages decodes images from JSON, as a restored history or a
// durable run's State carries them, and holds CheckImages to its bounds:
// no panic, and images it accepts are few and small enough, each with data
// of its stated type or an http(s) URL, never both; an error quotes at most
// a short piece of what it was given.
func FuzzCheckImages(f *testing.F) {
	f.Add([]byte(`[{"mime_type":"image/png","data":"iVBORw0KGgoAAAANSUhEUg=="}]`))
	f.Add([]byte(`[{"url":"https://example.com/a.png"},{"mime_type":"image/gif","data":"R0lGODlhAQABAA=="}]`))
	f.Add([]byte(`[{"mime_type":"image/png","data":"iVBORw0KGgo=","url":"https://x"}]`))
	f.Add([]byte(`[{"mime_type":"text/html","url":"javascript:alert(1)"}]`))
	f.Add([]byte(`[{"url":"https://user:pw@host/"},{},{"data":"/9j/4A=="}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var images []loop.Image
		if json.Unmarshal(data, &images) != nil {
			return
		}
		err := loop.CheckImages(images)
		if err != nil {
			if len(err.Error()) > 300 {
				t.Fatalf("an error of %d bytes: %.300s", len(err.Error()), err)
			}
			return
		}
		if len(images) > loop.MaxImages {
			t.Fatalf("%d images accepted", len(images))
		}
		total := 0
		for i, img := range images {
			total += len(img.Data)
			switch {
			case len(img.Data) > 0 && img.URL != "":
				t.Fatalf("image %d has both data and a URL", i)
			case len(img.Data) > 0 && loop.ImageType(img.Data) != img.MIMEType:
				t.Fatalf("image %d: type %q, data %q", i, img.MIMEType, loop.ImageType(img.Data))
			case len(img.Data) == 0 && !strings.HasPrefix(strings.ToLower(img.URL), "http://") && !strings.HasPrefix(strings.ToLower(img.URL), "https://"):
				t.Fatalf("image %d: URL %q accepted", i, img.URL)
			}
		}
		if total > loop.MaxImageBytes {
			t.Fatalf("%d bytes accepted", total)
		}
		_ = loop.ImageNote(images)
	})
}
