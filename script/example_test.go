package script_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/script"
)

func ExampleParse() {
	tools, err := script.Parse("weather.star", `
def forecast(city, days=3):
    """The weather forecast for a city.

    city: the city's name
    days: how many days ahead

    onion:intent read
    """
    return ok(request("GET", "/forecast", query={"city": city, "days": days}))
`, script.BaseURL("https://weather.example.com"), script.Header("Authorization", "Bearer key"))
	if err != nil {
		log.Fatal(err)
	}
	t := tools[0]
	fmt.Println(t.Name(), t.Intent())
	fmt.Println(t.Description())
	fmt.Println(string(t.Schema()))
	// Output:
	// forecast read
	// The weather forecast for a city.
	// {"type":"object","properties":{"city":{"type":"string","description":"the city's name"},"days":{"type":"integer","description":"how many days ahead","default":3}},"required":["city"],"additionalProperties":false}
}

func ExampleLoad() {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer key" {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "The printer is on fire.")
	}))
	defer app.Close()

	tools, err := script.Load("testdata/tickets.star", script.BaseURL(app.URL), script.Header("Authorization", "Bearer key"))
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools {
		fmt.Println(t.Name(), t.Intent())
	}
	out, err := tools[0].Call(context.Background(), `{"ticket_id":"42"}`)
	fmt.Println(out, err)
	// Output:
	// ticket_text read
	// search_tickets read
	// comment_ticket write
	// delete_ticket delete
	// {"text":"The printer is on fire."} <nil>
}

// The package doc's agent, as it is: the tools of a file given to an agent.
func Example_agent() {
	const token = "key"
	tracker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "who are you?", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, "The printer is on fire.")
	}))
	defer tracker.Close()
	trackerURL := tracker.URL

	// snippet:load
	tools, err := script.Load("testdata/tickets.star",
		script.BaseURL(trackerURL),
		script.Header("Authorization", "Bearer "+token))
	if err != nil {
		log.Fatal(err)
	}
	agent, err := onion.NewAgent("support", tools)
	if err != nil {
		log.Fatal(err)
	}
	// end snippet:load

	defer agent.Close()
	ticket, _ := agent.Tools().Get("ticket_text")
	fmt.Println(ticket.Call(context.Background(), `{"ticket_id":"42"}`))
	// Output:
	// {"text":"The printer is on fire."} <nil>
}
