package telemetry_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/oniontest"
	"github.com/onionkit/onion/telemetry"
)

// Weather reports the weather in a city.
//
//onion:intent read
func Weather(city string) string { return "sunny in " + city }

func ExampleOption() {
	s := oniontest.NewServer(nil,
		oniontest.ToolCalls(oniontest.Call("weather", `{"city":"Paris"}`)),
		oniontest.Text("It is sunny in Paris."),
	)
	defer s.Close()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))

	agent, err := onion.NewAgent("weatherbot", Weather, onion.BaseURL(s.URL()), onion.APIKey("test"),
		onion.Model("gpt-4o-mini"), telemetry.Option(telemetry.TracerProvider(tp)))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := agent.Input(context.Background(), "Weather in Paris?"); err != nil {
		fmt.Println(err)
		return
	}
	for _, span := range rec.Ended() {
		fmt.Println(span.Name(), span.SpanKind())
	}
	// Output:
	// chat gpt-4o-mini client
	// execute_tool weather internal
	// chat gpt-4o-mini client
	// invoke_agent weatherbot internal
}
