package openai

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/onionkit/onion/loop"
)

// This file puts images on both wires (loop.Message.Images). A user
// message's images are content parts: Chat Completions' image_url, the
// Responses API's input_image, the bytes as a data: URL with their MIME
// type, a URL as it is. A tool's images go in the Responses API's
// function_call_output, whose output may be a list of parts; Chat
// Completions' tool messages take text only, so the run of tool messages
// is followed by one user message showing the images, each group labelled
// with the call it came from, as OpenAI's documentation suggests for
// images from tools.

// The bounds of the images of one request, OpenAI's own: an image of at
// most 20 MiB, at most 500 images.
const (
	maxImageBytes = 20 << 20
	maxImages     = 500
	// maxImageURL bounds an image's URL: a data: URL of the largest image,
	// base64, or a web address.
	maxImageURL = maxImageBytes/3*4 + 256
)

// checkImages refuses, before anything is sent, the images of msgs that
// no wire could put on the wire as they are: too many, too large, neither
// bytes nor a URL, a MIME type that is not an image's, a URL of another
// scheme than https, http or data.
func checkImages(msgs []loop.Message) error {
	n := 0
	for i := range msgs {
		m := &msgs[i]
		if len(m.Images) > 0 && m.Role != loop.RoleUser && m.Role != loop.RoleTool {
			return fmt.Errorf("message %d (%s) carries images: only user and tool messages may", i, m.Role)
		}
		for j := range m.Images {
			if n++; n > maxImages {
				return fmt.Errorf("message %d (%s), image %d: the request carries more than %d images, the most OpenAI takes in one request", i, m.Role, j, maxImages)
			}
			if err := checkImage(&m.Images[j]); err != nil {
				return fmt.Errorf("message %d (%s), image %d: %w", i, m.Role, j, err)
			}
		}
	}
	return nil
}

func checkImage(im *loop.Image) error {
	switch {
	case len(im.Data) > 0:
		if len(im.Data) > maxImageBytes {
			return fmt.Errorf("%d bytes, over the %d OpenAI takes", len(im.Data), maxImageBytes)
		}
		if t := imageType(im); !validImageType(t) {
			return fmt.Errorf("MIME type %q is not an image's (image/png, image/jpeg, image/webp, image/gif)", t)
		}
	case im.URL != "":
		if len(im.URL) > maxImageURL {
			return fmt.Errorf("a URL of %d bytes, over the %d a request takes", len(im.URL), maxImageURL)
		}
		scheme, _, _ := strings.Cut(im.URL, ":")
		switch strings.ToLower(scheme) {
		case "https", "http", "data":
		default:
			return fmt.Errorf("URL scheme %q: OpenAI fetches https and http URLs, or takes the image's bytes as data", scheme)
		}
	default:
		return fmt.Errorf("neither bytes nor a URL")
	}
	return nil
}

// imageType is the MIME type of an image's bytes: the one it names, else
// the one its bytes start like.
func imageType(im *loop.Image) string {
	if im.MIMEType != "" {
		return strings.ToLower(im.MIMEType)
	}
	return http.DetectContentType(im.Data)
}

// validImageType reports whether t is image/ and a name that may stand in
// a data: URL as it is.
func validImageType(t string) bool {
	sub, ok := strings.CutPrefix(t, "image/")
	if !ok || sub == "" || len(sub) > 64 {
		return false
	}
	for i := 0; i < len(sub); i++ {
		c := sub[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

// appendImageURL appends, as a JSON string, the URL the wires send for
// im: its bytes as a data: URL (whose characters need no escaping: the
// MIME type is checked, the rest is base64), or its URL, quoted.
func appendImageURL(b []byte, im *loop.Image) []byte {
	if len(im.Data) == 0 {
		return appendString(b, im.URL)
	}
	b = append(b, `"data:`...)
	b = append(b, imageType(im)...)
	b = append(b, ";base64,"...)
	b = base64.StdEncoding.AppendEncode(b, im.Data)
	return append(b, '"')
}

// imageURL is the URL the wires send for im.
func imageURL(im *loop.Image) string {
	if len(im.Data) == 0 {
		return im.URL
	}
	return "data:" + imageType(im) + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
}

// part is one part of a message's content: text, or an image.
type part struct {
	text  string
	image *loop.Image // nil for text
}

// contentParts are the parts of a message with images: its text, if any,
// then its images.
func contentParts(m *loop.Message) []part {
	parts := make([]part, 0, len(m.Images)+1)
	if m.Content != "" {
		parts = append(parts, part{text: m.Content})
	}
	for i := range m.Images {
		parts = append(parts, part{image: &m.Images[i]})
	}
	return parts
}

// toolImageParts are the parts of the user message that shows Chat
// Completions the images of the run of tool messages ending at msgs[last]:
// for each tool message with images, a line naming its call, then the
// images. It is nil when none has images.
func toolImageParts(msgs []loop.Message, last int) []part {
	first := last
	for first > 0 && msgs[first-1].Role == loop.RoleTool {
		first--
	}
	var parts []part
	for i := first; i <= last; i++ {
		m := &msgs[i]
		if len(m.Images) == 0 {
			continue
		}
		label := "The tool call " + m.ToolCallID
		if m.Name != "" {
			label += " (" + m.Name + ")"
		}
		if len(m.Images) == 1 {
			label += " returned this image:"
		} else {
			label += " returned these " + strconv.Itoa(len(m.Images)) + " images:"
		}
		parts = append(parts, part{text: label})
		for j := range m.Images {
			parts = append(parts, part{image: &m.Images[j]})
		}
	}
	return parts
}

// chatMessages calls yield with each message of msgs as Chat Completions
// takes it, parts being nil for a message sent as text, else its content
// parts. A run of tool messages that returned images is followed by a
// user message showing them; when a user message follows the run, the
// images go at the start of that message instead, so that user turns
// still never follow each other (see loop/alternate.go). What is yielded
// depends on msgs alone: the requests of a run keep a stable prefix.
func chatMessages(msgs []loop.Message, yield func(m *loop.Message, parts []part)) {
	for i := 0; i < len(msgs); i++ {
		m := &msgs[i]
		switch {
		case m.Role == loop.RoleTool:
			yield(m, nil) // its text; its images follow the run
			if i+1 < len(msgs) && msgs[i+1].Role == loop.RoleTool {
				continue
			}
			parts := toolImageParts(msgs, i)
			if parts == nil {
				continue
			}
			if i+1 < len(msgs) && msgs[i+1].Role == loop.RoleUser {
				i++
				parts = append(parts, contentParts(&msgs[i])...)
			}
			yield(&loop.Message{Role: loop.RoleUser}, parts)
		case m.Role == loop.RoleUser && len(m.Images) > 0:
			yield(m, contentParts(m))
		default:
			yield(m, nil)
		}
	}
}

// appendChatParts appends parts as a Chat Completions content array, in
// go-openai's field order.
func appendChatParts(b []byte, parts []part) []byte {
	b = append(b, '[')
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		o := object{b: b}
		if p.image == nil {
			o.str("type", "text")
			o.str("text", p.text)
		} else {
			o.str("type", "image_url")
			o.key("image_url")
			o.b = append(o.b, `{"url":`...)
			o.b = append(appendImageURL(o.b, p.image), '}')
		}
		b = o.end()
	}
	return append(b, ']')
}

// appendInputParts appends parts as the Responses API's content parts
// (input_text, input_image with detail auto), in go-openai's field order.
func appendInputParts(b []byte, parts []part) []byte {
	b = append(b, '[')
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		o := object{b: b}
		if p.image == nil {
			o.str("type", "input_text")
			o.str("text", p.text)
		} else {
			o.str("type", "input_image")
			o.str("detail", "auto")
			o.key("image_url")
			o.b = appendImageURL(o.b, p.image)
		}
		b = o.end()
	}
	return append(b, ']')
}

// goChatParts are parts as go-openai's, for a client that does not
// splice.
func goChatParts(parts []part) []goopenai.ChatMessagePart {
	out := make([]goopenai.ChatMessagePart, len(parts))
	for i, p := range parts {
		if p.image == nil {
			out[i] = goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: p.text}
		} else {
			out[i] = goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeImageURL, ImageURL: &goopenai.ChatMessageImageURL{URL: imageURL(p.image)}}
		}
	}
	return out
}

// goInputParts are parts as go-openai's Responses API content parts.
func goInputParts(parts []part) []any {
	out := make([]any, len(parts))
	for i, p := range parts {
		if p.image == nil {
			out[i] = goopenai.ResponseInputText{Type: "input_text", Text: p.text}
		} else {
			out[i] = goopenai.ResponseInputImage{Type: "input_image", Detail: "auto", ImageURL: imageURL(p.image)}
		}
	}
	return out
}
