package gemini

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"google.golang.org/genai"

	"github.com/onionkit/onion/loop"
)

// This file sends images: bytes as inline data, a URL as file data the
// API fetches itself (public and signed https URLs, gs:// objects and
// the API's own files, as it documents them since January 2026), a data:
// URL as the inline data it holds.

// maxImage bounds an image sent inline: the API takes up to 100 MB a
// request, base64 included.
const maxImage = 20 << 20

// image is img as the API takes it: inline bytes, or a URI to fetch,
// each with its MIME type.
func image(img loop.Image) (data []byte, uri, mimeType string, err error) {
	mimeType = img.MIMEType
	switch {
	case len(img.Data) > 0:
		data = img.Data
	case strings.HasPrefix(img.URL, "data:"):
		mimeType, data, err = dataURL(img.URL, mimeType)
		if err != nil {
			return nil, "", "", err
		}
	case img.URL != "":
		u, err := url.Parse(img.URL)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "gs") {
			return nil, "", "", fmt.Errorf("the Gemini API fetches images from https and gs:// URLs, not %q: pass the image's bytes instead", bound(img.URL))
		}
		if mimeType == "" {
			mimeType = imageTypes[strings.ToLower(path.Ext(u.Path))]
		}
		if !strings.HasPrefix(mimeType, "image/") {
			return nil, "", "", fmt.Errorf("no image MIME type for %s: set Image.MIMEType", bound(u.Redacted()))
		}
		return nil, img.URL, mimeType, nil
	default:
		return nil, "", "", errors.New("an image with neither Data nor URL")
	}
	if len(data) > maxImage {
		return nil, "", "", fmt.Errorf("an image of %d bytes: the Gemini API takes inline images of up to %d MiB; pass a URL instead", len(data), maxImage>>20)
	}
	if mimeType == "" {
		mimeType = http.DetectContentType(data)
	}
	if !strings.HasPrefix(mimeType, "image/") {
		return nil, "", "", fmt.Errorf("the image's MIME type is %q: set Image.MIMEType to an image type", mimeType)
	}
	return data, "", mimeType, nil
}

// dataURL decodes a data: URL's base64 bytes.
func dataURL(s, mimeType string) (string, []byte, error) {
	head, payload, ok := strings.Cut(strings.TrimPrefix(s, "data:"), ",")
	if !ok || !strings.HasSuffix(head, ";base64") {
		return "", nil, errors.New("a data: URL that is not base64")
	}
	if base64.StdEncoding.DecodedLen(len(payload)) > maxImage {
		return "", nil, fmt.Errorf("a data: URL of %d bytes: the Gemini API takes inline images of up to %d MiB", len(payload), maxImage>>20)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", nil, fmt.Errorf("a data: URL: %w", err)
	}
	if mimeType == "" {
		mimeType = strings.TrimSuffix(head, ";base64")
	}
	return mimeType, data, nil
}

// imageTypes are the image types the Gemini API takes, by file
// extension: a fixed table, the same on every machine.
var imageTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
	".gif": "image/gif", ".heic": "image/heic", ".heif": "image/heif",
}

// imagePart is img as a part of a content.
func imagePart(img loop.Image) (*genai.Part, error) {
	data, uri, mimeType, err := image(img)
	if err != nil {
		return nil, err
	}
	if uri != "" {
		return &genai.Part{FileData: &genai.FileData{FileURI: uri, MIMEType: mimeType}}, nil
	}
	return &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: mimeType}}, nil
}

// imageResponsePart is img as the part n of a function response, and the
// name its response refers to it by ({"$ref": name}), as Gemini 3 takes
// images a function returned.
func imageResponsePart(img loop.Image, n int) (*genai.FunctionResponsePart, string, error) {
	data, uri, mimeType, err := image(img)
	if err != nil {
		return nil, "", err
	}
	name := fmt.Sprintf("image_%d", n)
	for ext, t := range imageTypes {
		if t == mimeType && ext != ".jpeg" {
			name += ext
			break
		}
	}
	if uri != "" {
		return &genai.FunctionResponsePart{FileData: &genai.FunctionResponseFileData{FileURI: uri, MIMEType: mimeType, DisplayName: name}}, name, nil
	}
	return &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{Data: data, MIMEType: mimeType, DisplayName: name}}, name, nil
}
