package onion_test

import (
	"context"
	"fmt"
	"log"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// A prompt with a picture: WithImages puts it in the context of any entry
// point (Run, Stream, Ask, a Conversation's), which sends it with the
// prompt's text.
func ExampleWithImages() {
	s := oniontest.NewServer(nil, oniontest.Text("A red square on white."))
	defer s.Close()
	agent, err := onion.NewAgent("viewer", onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	// snippet:images-prompt
	photo, err := onion.ImageFile("testdata/dot.png")
	if err != nil {
		log.Fatal(err)
	}
	res, err := agent.Run(onion.WithImages(ctx, photo), "What is in this picture?")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output)
	// end snippet:images-prompt

	// Output: A red square on white.
}

// snippet:images-tool

// Chart draws a month's sales: the model is shown the picture.
//
// month: the month, such as 2026-11
//
//onion:intent read
func Chart(month string) (onion.Image, error) {
	return onion.ImageFile("testdata/dot.png") // stands in for a real chart
}

// end snippet:images-tool

// A tool that returns an image: its tool message carries the picture,
// after a note the model reads.
func Example_toolImage() {
	s := oniontest.NewServer(nil,
		oniontest.ToolCalls(oniontest.Call("chart", `{"month":"2026-11"}`)),
		oniontest.Text("Sales rose."),
	)
	defer s.Close()
	agent, err := onion.NewAgent("analyst", Chart, onion.BaseURL(s.URL()), onion.APIKey("test"))
	if err != nil {
		log.Fatal(err)
	}
	for e, err := range agent.Stream(context.Background(), "How did November go?") {
		if err != nil {
			log.Fatal(err)
		}
		if e.Kind == onion.EventToolFinished {
			fmt.Println(e.Call.Output, len(e.Call.Images), e.Call.Images[0].MIMEType)
		}
		if e.Kind == onion.EventDone {
			fmt.Println(e.Result.Output)
		}
	}
	// Output:
	// [1 image follows: image/png, 97 bytes] 1 image/png
	// Sales rose.
}
