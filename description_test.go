package onion_test

import (
	"context"
	"testing"

	"github.com/onionkit/onion"
)

// Humidity reports the relative humidity in a city.
//
// city: the city's English name
func Humidity(city string) float64 { return 0.5 }

// Rainfall in a city, in millimetres: the doc starts with a longer word
// than the func's name.
func Rain(city string) float64 { return 3 }

// Clear
func Clear() bool { return true }

// Measure the rainfall of a city: a doc in the imperative, whose first
// word is the func's name but no subject.
func Measure(city string) float64 { return 2 }

// OutlookArgs are the parameters of Outlook.
type OutlookArgs struct {
	City string `json:"city" doc:"the city's English name"`
	Days int    `json:"days" doc:"how many days ahead"`
}

// Outlook predicts the weather of the coming days.
func Outlook(ctx context.Context, args OutlookArgs) (string, error) { return "sun", nil }

// gauge is a weather station.
type gauge struct{}

// Reading reads the station's gauge.
//
//onion:intent read
func (*gauge) Reading() float64 { return 12 }

// TestDescriptionDropsTheGoName: every way a tool gets its description from
// a doc comment sends it without the Go name it starts with, and nothing
// else of it is changed.
func TestDescriptionDropsTheGoName(t *testing.T) {
	must := func(tool *onion.Tool, err error) *onion.Tool {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return tool
	}
	g := &gauge{}
	methods, err := onion.ToolsFrom(g)
	if err != nil || len(methods) != 1 {
		t.Fatalf("ToolsFrom: %d tools, %v", len(methods), err)
	}
	for _, c := range []struct {
		how  string
		tool *onion.Tool
		want string
	}{
		{"positional func", must(onion.NewTool(Humidity)), "Reports the relative humidity in a city."},
		{"struct-argument func", must(onion.NewTool(Outlook)), "Predicts the weather of the coming days."},
		{"NewTypedTool", must(onion.NewTypedTool(Outlook)), "Predicts the weather of the coming days."},
		{"method", methods[0], "Reads the station's gauge."},
		{"bound method", must(onion.NewTool(g.Reading)), "Reads the station's gauge."},
		{"a longer first word", must(onion.NewTool(Rain)), "Rainfall in a city, in millimetres: the doc starts with a longer word than the func's name."},
		{"the name alone", must(onion.NewTool(Clear)), "Clear"},
		{"the imperative", must(onion.NewTool(Measure)), "Measure the rainfall of a city: a doc in the imperative, whose first word is the func's name but no subject."},
		{"onion.Description", must(onion.NewTool(Humidity, onion.Description("Humidity reports the humidity."))), "Humidity reports the humidity."},
	} {
		if got := c.tool.Description(); got != c.want {
			t.Errorf("%s: description %q, want %q", c.how, got, c.want)
		}
		if got := c.tool.Definition().Function.Description; got != c.want {
			t.Errorf("%s: sent description %q, want %q", c.how, got, c.want)
		}
	}
}
