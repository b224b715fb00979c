package oniontest_test

import (
	"context"
	"flag"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
)

// The README's recorded run, as it is:

// snippet:recorded
// go test -run TestWeatherRecorded -record https://api.openai.com/v1
// records the run again, with $OPENAI_API_KEY (never written down);
// plain go test plays it back.
var recordFrom = flag.String("record", "", "record the run again from this endpoint")

func TestWeatherRecorded(t *testing.T) {
	const file = "testdata/weather_run.json"
	var s *oniontest.Server
	if *recordFrom != "" {
		s = oniontest.Record(t, *recordFrom, file)
	} else {
		s = oniontest.Playback(t, file)
	}
	agent, err := onion.NewAgent("weather", GetWeather, onion.BaseURL(s.URL()), onion.Model("gpt-4.1-mini"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Run(context.Background(), "Weather in Paris?")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.ToolCalls) != 1 || res.ToolCalls[0].Arguments != `{"city":"Paris"}` {
		t.Errorf("tool calls: %+v", res.ToolCalls)
	}
}

// end snippet:recorded

var standIn = flag.Bool("standin", false, "record TestWeatherRecorded's run again from an oniontest server standing in for the model")

// TestWeatherStandIn records testdata/weather_run.json again, with
// -standin, from the oniontest server it was first recorded from: a model
// that asks for the weather in Paris, then answers. Do so when the
// requests the agent sends change on purpose.
func TestWeatherStandIn(t *testing.T) {
	if !*standIn {
		t.Skip("records only with -standin")
	}
	model := oniontest.NewServer(t,
		oniontest.ToolCalls(oniontest.Call("get_weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	*recordFrom = model.URL()
	defer func() { *recordFrom = "" }()
	TestWeatherRecorded(t)
}
