package onion

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/onionkit/onion/internal/atomicfile"
	"github.com/onionkit/onion/loop"
)

// This file is images both ways: the pictures a prompt carries to the
// model, and those a tool shows it. An Image is loop.Image; the bounds
// (loop.MaxImages a message, loop.MaxImageBytes an image and a message,
// PNG, JPEG, GIF or WebP) are loop.CheckImages', applied to prompts
// before a run, to tool results as each call ends, and to a history
// restored from outside.

type promptImagesKey struct{}

// WithImages returns a copy of ctx under which a run's prompt carries
// images besides its text: Run, Input, Stream, Ask, AskStream, AskIn, a
// Conversation's Run, Input and Stream, and package temporal's Start (a
// durable run) given that context send the prompt as one user message
// with its text and the images, and a Conversation keeps them with the
// prompt in its history.
//
//	img, err := onion.ImageFile("receipt.jpg")
//	...
//	res, err := agent.Run(onion.WithImages(ctx, img), "What is the total on this receipt?")
//
// The run checks the images first (see loop.CheckImages) and fails before
// any request when one is over the bounds. The contexts a run hands its
// tools and its model no longer carry the images, so that an agent run
// inside a tool does not send them again. A later WithImages replaces the
// images of an earlier one; WithImages(ctx) with none removes them.
func WithImages(ctx context.Context, images ...Image) context.Context {
	return context.WithValue(ctx, promptImagesKey{}, slices.Clip(slices.Clone(images)))
}

// promptImages takes the images WithImages put in ctx: they are returned
// with ctx as the run hands it on, without them.
func promptImages(ctx context.Context) (context.Context, []Image) {
	images, ok := ctx.Value(promptImagesKey{}).([]Image)
	if !ok {
		return ctx, nil
	}
	if len(images) == 0 {
		return ctx, nil // removed already
	}
	return context.WithValue(ctx, promptImagesKey{}, []Image(nil)), images
}

// ImageData is an image of data, whose type is read from its first bytes:
// PNG, JPEG, GIF or WebP. Anything else, and data over
// loop.MaxImageBytes, is an error saying what it is.
func ImageData(data []byte) (Image, error) {
	img, err := imageData(data)
	if err != nil {
		return Image{}, fmt.Errorf("onion.ImageData: %w", err)
	}
	return img, nil
}

func imageData(data []byte) (Image, error) {
	img := Image{MIMEType: loop.ImageType(data), Data: data}
	if img.MIMEType == "" && len(data) > 0 {
		return Image{}, fmt.Errorf("%d bytes that are not a PNG, JPEG, GIF or WebP image (they begin % x)", len(data), data[:min(len(data), 8)])
	}
	return img, checkOne(img)
}

// checkOne is loop.CheckImages for a single image, whose errors need not
// number it.
func checkOne(img Image) error {
	if err := loop.CheckImages([]Image{img}); err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "image 1: "))
	}
	return nil
}

// ImageFile reads the image at path, which must be a regular file (not a
// directory, a device or a named pipe, which are refused without being
// read) of at most loop.MaxImageBytes, of a type ImageData takes.
func ImageFile(path string) (Image, error) {
	data, err := atomicfile.ReadFile(path, loop.MaxImageBytes)
	if err != nil {
		return Image{}, fmt.Errorf("onion.ImageFile: %w", err)
	}
	if len(data) == 0 {
		return Image{}, fmt.Errorf("onion.ImageFile: read %s: the file is empty", path)
	}
	img, err := imageData(data)
	if err != nil {
		return Image{}, fmt.Errorf("onion.ImageFile: read %s: %w", path, err)
	}
	return img, nil
}

// ImageURL is the image at url, an http or https URL the provider fetches
// itself; nothing is fetched here. A URL with a user name or password, a
// data: URL (give its bytes to ImageData instead), or one over 8 KiB is an
// error. A model that cannot fetch images may refuse it.
func ImageURL(url string) (Image, error) {
	img := Image{URL: url}
	if url == "" {
		return Image{}, errors.New("onion.ImageURL: the URL is empty")
	}
	if err := checkOne(img); err != nil {
		return Image{}, fmt.Errorf("onion.ImageURL: %w", err)
	}
	return img, nil
}

// imageResult reports whether t, a tool's result type, is an image the
// model is shown: Image, *Image or []Image.
func imageResult(t reflect.Type) bool {
	return t == imageType || t == reflect.PointerTo(imageType) || t == reflect.SliceOf(imageType)
}

var imageType = reflect.TypeFor[Image]()

// callState is what the context of a tool call carries: the call, and the
// images the tool shows with ShowImages.
type callState struct {
	call Call

	mu     sync.Mutex // guards images and closed
	images []Image
	closed bool // the call returned: later images are dropped
}

// ShowImages shows the model images along with the result of the tool
// call running in ctx, after what the tool returns, for a tool whose
// result is not an Image or []Image itself (a func returning an Image
// needs no ShowImages). It reports whether they will be shown: false
// outside a tool call (a Tool.Call of its own), or once the call has
// returned, when it does nothing. The images are checked as the call
// ends: a call whose images are over the bounds of loop.CheckImages
// fails, its error naming the tool. Call it from the tool's goroutine or
// one the tool waits for.
func ShowImages(ctx context.Context, images ...Image) bool {
	cs, ok := ctx.Value(callKey{}).(*callState)
	if !ok {
		return false
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return false
	}
	cs.images = append(cs.images, images...)
	return true
}

// shown closes cs and returns the images its tool showed.
func (cs *callState) shown() []Image {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	return cs.images
}
