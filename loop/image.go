package loop

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// This file is what an image in a message may be: a prompt's pictures
// and a tool's come from outside (a file, a peer, a restored history), so
// each is checked against the same bounds before a model is sent it, and
// a tool result whose images break them fails the call instead.

// Bounds of the images of one message. Providers take about as much:
// OpenAI up to 50 MB of images per request, Anthropic 5 MB per image and
// 100 images per request, Gemini 20 MB of inline data per request.
const (
	// MaxImages bounds the images of one message.
	MaxImages = 20
	// MaxImageBytes bounds the bytes of one image, and of all the images
	// of one message together.
	MaxImageBytes = 20 << 20
)

// maxImageURL bounds an image's URL: a signed URL of a cloud store is a
// few hundred bytes to 2 KiB.
const maxImageURL = 8 << 10

// imageTypes are the MIME types an image may have: the formats every
// provider onion speaks takes, each known by its first bytes.
var imageTypes = []struct {
	mime  string
	magic func([]byte) bool
}{
	{"image/png", func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) }},
	{"image/jpeg", func(b []byte) bool { return bytes.HasPrefix(b, []byte("\xff\xd8\xff")) }},
	{"image/gif", func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
	}},
	{"image/webp", func(b []byte) bool {
		return len(b) >= 14 && string(b[:4]) == "RIFF" && string(b[8:14]) == "WEBPVP"
	}},
}

// imageTypeList names the MIME types an image may have, for errors.
const imageTypeList = "image/png, image/jpeg, image/gif or image/webp"

// ImageType is the MIME type of data by its first bytes: "image/png",
// "image/jpeg", "image/gif" or "image/webp", or "" for anything else.
func ImageType(data []byte) string {
	for _, t := range imageTypes {
		if t.magic(data) {
			return t.mime
		}
	}
	return ""
}

func knownImageType(mime string) bool {
	for _, t := range imageTypes {
		if t.mime == mime {
			return true
		}
	}
	return false
}

// CheckImages reports the first way images, the images of one message,
// break the bounds a model is sent images within: more than MaxImages, an
// image or all of them together over MaxImageBytes, an image with both
// Data and a URL or neither, a MIMEType other than image/png, image/jpeg,
// image/gif or image/webp, Data that is not of its MIMEType, a URL that
// is not http or https or is over 8 KiB. Images are numbered from 1. The
// error quotes nothing of a URL, which may carry a signature.
func CheckImages(images []Image) error {
	if len(images) > MaxImages {
		return fmt.Errorf("%d images, over the limit of %d in one message", len(images), MaxImages)
	}
	total := 0
	for i, img := range images {
		if err := checkImage(img); err != nil {
			return fmt.Errorf("image %d: %w", i+1, err)
		}
		total += len(img.Data)
		if total > MaxImageBytes {
			return fmt.Errorf("images 1 to %d are %s together, over the limit of %s in one message", i+1, byteSize(total), byteSize(MaxImageBytes))
		}
	}
	return nil
}

func checkImage(img Image) error {
	if img.MIMEType != "" && !knownImageType(img.MIMEType) {
		return fmt.Errorf("the MIME type %q is not %s", short(img.MIMEType), imageTypeList)
	}
	switch {
	case len(img.Data) > 0 && img.URL != "":
		return errors.New("it has both data and a URL; give one")
	case len(img.Data) > 0:
		if len(img.Data) > MaxImageBytes {
			return fmt.Errorf("it is %s, over the limit of %s", byteSize(len(img.Data)), byteSize(MaxImageBytes))
		}
		got := ImageType(img.Data)
		switch {
		case got == "":
			return fmt.Errorf("its data is not a PNG, JPEG, GIF or WebP image: it begins % x", img.Data[:min(len(img.Data), 8)])
		case img.MIMEType == "":
			return fmt.Errorf("it has no MIME type; its data is %s", got)
		case got != img.MIMEType:
			return fmt.Errorf("its MIME type is %s, but its data is %s", img.MIMEType, got)
		}
		return nil
	case img.URL != "":
		return checkImageURL(img.URL)
	}
	return errors.New("it has neither data nor a URL")
}

// checkImageURL checks the URL of an image a provider is to fetch.
func checkImageURL(s string) error {
	if len(s) > maxImageURL {
		return fmt.Errorf("its URL is %s, over the limit of %s", byteSize(len(s)), byteSize(maxImageURL))
	}
	if strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return errors.New("its URL holds a space or a control character")
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errors.New("its URL does not parse")
	case u.Scheme == "data":
		return errors.New("its URL is a data: URL; give the bytes as Data with their MIME type instead")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("its URL is not http or https")
	case u.Host == "":
		return errors.New("its URL has no host")
	case u.User != nil:
		return errors.New("its URL holds a user name or password")
	}
	return nil
}

// ImageNote is the text that tells the model of the images of a tool
// result, which a wire sends after the result's text: how many, and the
// type and size of each, such as "[1 image follows: image/png, 34.2
// KiB]". It is "" for none. Call.End puts it ahead of the tool's text.
func ImageNote(images []Image) string {
	if len(images) == 0 {
		return ""
	}
	var b strings.Builder
	if len(images) == 1 {
		b.WriteString("[1 image follows: ")
	} else {
		fmt.Fprintf(&b, "[%d images follow: ", len(images))
	}
	for i, img := range images {
		if i > 0 {
			b.WriteString("; ")
		}
		if len(images) > 1 {
			fmt.Fprintf(&b, "%d. ", i+1)
		}
		mime := img.MIMEType
		if mime == "" {
			mime = "an image"
		}
		b.WriteString(short(mime))
		if img.URL != "" {
			b.WriteString(" at a URL")
		} else {
			b.WriteString(", " + byteSize(len(img.Data)))
		}
	}
	b.WriteString("]")
	return b.String()
}

// byteSize writes n bytes for people: "512 bytes", "3.4 KiB", "20.0 MiB".
func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// StartPrompt begins a run as Start does, of prompt, a user message of
// text (Content) and images (Images; the other fields are not read), with
// its final answer held to format as StartWithFormat does when format is
// not nil. The runtime checks prompt.Images with CheckImages first: the
// loop takes them as they are.
func (l *Loop) StartPrompt(runID string, seed uint64, history []Message, prompt Message, format *Format) (*State, []Effect) {
	st := l.state(runID, seed, history, prompt)
	if format != nil {
		st.Answer = &Answer{Format: *format}
	}
	return st, l.ask(st, nil)
}
