package bench

// The five tools whose tools array BenchmarkToolsTokens measures, declared
// for each framework the way its documentation shows: for onion, documented
// Go funcs; for Eino and openai-agents-go, structs tagged for
// invopop/jsonschema (which both reflect with); for ADK, structs tagged for
// google/jsonschema-go, with the enums and bounds its tags cannot say set
// on the inferred schema. Every framework is given the same text: the same
// tool descriptions, parameter descriptions, types, enums, bounds and
// required parameters, which TestToolsTokens checks in what each sends.

import (
	"context"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
)

// The tool descriptions, as every framework but onion is given them; onion
// reads them from the doc comments below.
const (
	weatherDesc = "Reports the current weather in a city."
	flightDesc  = "Reserves seats on a flight and returns the booking."
	addDesc     = "Returns the sum of two numbers."
	searchDesc  = "Searches the documentation and returns the best matching pages."
	ticketDesc  = "Opens a support ticket and returns it."
)

// Unit is a temperature scale.
type Unit string

// The temperature scales.
const (
	Celsius    Unit = "celsius"
	Fahrenheit Unit = "fahrenheit"
)

// Priority is how urgent a ticket is.
type Priority string

// The priorities.
const (
	Low    Priority = "low"
	Normal Priority = "normal"
	High   Priority = "high"
)

// Weather is what get_weather returns.
type Weather struct {
	Temperature float64 `json:"temperature"`
	Conditions  string  `json:"conditions"`
}

// Page is one search hit.
type Page struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Ticket is an opened ticket.
type Ticket struct {
	ID    int      `json:"id"`
	Title string   `json:"title"`
	Tags  []string `json:"tags"`
}

// Sum is what add returns, for the frameworks whose results are objects.
type Sum struct {
	Sum float64 `json:"sum"`
}

// onion's tools.

// GetWeather reports the current weather in a city.
//
// city: the city's English name, such as "Paris"
// unit: the temperature scale
//
//onion:intent read
func GetWeather(city string, unit Unit) Weather {
	return Weather{Temperature: 21, Conditions: "sunny in " + city}
}

// ReserveArgs are the parameters of ReserveFlight.
type ReserveArgs struct {
	From  string `json:"from" doc:"the IATA code of the departure airport, such as \"LIS\""`
	To    string `json:"to" doc:"the IATA code of the arrival airport"`
	Date  string `json:"date" doc:"the day of the flight, as YYYY-MM-DD"`
	Seats int    `json:"seats" doc:"how many seats to book" jsonschema:"minimum=1,maximum=9"`
}

// ReserveFlight reserves seats on a flight and returns the booking.
func ReserveFlight(ctx context.Context, args ReserveArgs) (Booking, error) {
	return Booking{Ref: args.From + args.To, Seats: args.Seats}, nil
}

// SearchArgs are the parameters of SearchDocs.
type SearchArgs struct {
	Query string `json:"query" doc:"the words to look for"`
	Limit int    `json:"limit" doc:"how many pages to return at most" jsonschema:"minimum=1,maximum=20"`
}

// SearchDocs searches the documentation and returns the best matching pages.
//
//onion:intent read
func SearchDocs(ctx context.Context, args SearchArgs) ([]Page, error) {
	return []Page{{Title: args.Query, URL: "https://example.com/"}}, nil
}

// TicketArgs are the parameters of CreateTicket.
type TicketArgs struct {
	Title    string   `json:"title" doc:"a one-line summary of the problem"`
	Priority Priority `json:"priority" doc:"how urgent it is"`
	Tags     []string `json:"tags" doc:"the labels to file it under"`
}

// CreateTicket opens a support ticket and returns it.
func CreateTicket(ctx context.Context, args TicketArgs) (Ticket, error) {
	return Ticket{ID: 1, Title: args.Title, Tags: args.Tags}, nil
}

// onionTools are the five tools as onion makes them; Add is bench's
// positional func of two numbers ("Add returns the sum of two numbers.").
func onionTools() []any {
	return []any{GetWeather, ReserveFlight, Add, SearchDocs, CreateTicket}
}

// The argument structs for Eino and openai-agents-go: invopop/jsonschema
// tags (Eino reflects with its fork, eino-contrib/jsonschema).

type tagWeatherArgs struct {
	City string `json:"city" jsonschema_description:"the city's English name, such as \"Paris\""`
	Unit string `json:"unit" jsonschema:"enum=celsius,enum=fahrenheit" jsonschema_description:"the temperature scale"`
}

type tagFlightArgs struct {
	From  string `json:"from" jsonschema_description:"the IATA code of the departure airport, such as \"LIS\""`
	To    string `json:"to" jsonschema_description:"the IATA code of the arrival airport"`
	Date  string `json:"date" jsonschema_description:"the day of the flight, as YYYY-MM-DD"`
	Seats int    `json:"seats" jsonschema:"minimum=1,maximum=9" jsonschema_description:"how many seats to book"`
}

type tagAddArgs struct {
	A float64 `json:"a" jsonschema_description:"the first number"`
	B float64 `json:"b" jsonschema_description:"the second number"`
}

type tagSearchArgs struct {
	Query string `json:"query" jsonschema_description:"the words to look for"`
	Limit int    `json:"limit" jsonschema:"minimum=1,maximum=20" jsonschema_description:"how many pages to return at most"`
}

type tagTicketArgs struct {
	Title    string   `json:"title" jsonschema_description:"a one-line summary of the problem"`
	Priority string   `json:"priority" jsonschema:"enum=low,enum=normal,enum=high" jsonschema_description:"how urgent it is"`
	Tags     []string `json:"tags" jsonschema_description:"the labels to file it under"`
}

// The argument structs for ADK: google/jsonschema-go takes a field's
// jsonschema tag as its description and nothing else.

type adkWeatherArgs struct {
	City string `json:"city" jsonschema:"the city's English name, such as \"Paris\""`
	Unit Unit   `json:"unit" jsonschema:"the temperature scale"`
}

type adkFlightArgs struct {
	From  string `json:"from" jsonschema:"the IATA code of the departure airport, such as \"LIS\""`
	To    string `json:"to" jsonschema:"the IATA code of the arrival airport"`
	Date  string `json:"date" jsonschema:"the day of the flight, as YYYY-MM-DD"`
	Seats int    `json:"seats" jsonschema:"how many seats to book"`
}

type adkAddArgs struct {
	A float64 `json:"a" jsonschema:"the first number"`
	B float64 `json:"b" jsonschema:"the second number"`
}

type adkSearchArgs struct {
	Query string `json:"query" jsonschema:"the words to look for"`
	Limit int    `json:"limit" jsonschema:"how many pages to return at most"`
}

type adkTicketArgs struct {
	Title    string   `json:"title" jsonschema:"a one-line summary of the problem"`
	Priority Priority `json:"priority" jsonschema:"how urgent it is"`
	Tags     []string `json:"tags" jsonschema:"the labels to file it under"`
}

// adkSchema infers T's schema as ADK would, the enum types given their
// values, and sets the bounds google/jsonschema-go has no tag for.
func adkSchema[T any](bounds map[string][2]float64) (*jsonschema.Schema, error) {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[Unit]():     {Type: "string", Enum: []any{"celsius", "fahrenheit"}},
		reflect.TypeFor[Priority](): {Type: "string", Enum: []any{"low", "normal", "high"}},
	}})
	if err != nil {
		return nil, err
	}
	for name, b := range bounds {
		lo, hi := b[0], b[1]
		s.Properties[name].Minimum, s.Properties[name].Maximum = &lo, &hi
	}
	return s, nil
}
