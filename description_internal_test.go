package onion

import "testing"

// TestWithoutName: a description loses the Go name it starts with only
// when the name is a whole word followed by a verb as Go docs have it.
func TestWithoutName(t *testing.T) {
	for _, c := range []struct {
		desc, want string
		names      []string
	}{
		{"Weather reports the weather in a city.", "Reports the weather in a city.", []string{"Weather"}},
		{"Weatherly reports the weather.", "Weatherly reports the weather.", []string{"Weather"}},
		{"Weather", "Weather", []string{"Weather"}},
		{"Weather ", "Weather ", []string{"Weather"}},
		{"Weather: the forecast.", "Weather: the forecast.", []string{"Weather"}},
		{"Reports the weather.", "Reports the weather.", []string{"Weather"}},
		{"weather reports the weather.", "weather reports the weather.", []string{"Weather"}},
		{"Add  adds two numbers.", "Adds two numbers.", []string{"Add"}},
		{"TodoList.Add adds a task.", "Adds a task.", []string{"Add", "TodoList.Add"}},
		{"Search eBay for an item.", "Search eBay for an item.", []string{"Search"}},
		{"Get iOS versions.", "Get iOS versions.", []string{"Get"}},
		{"Fetch 3 pages.", "Fetch 3 pages.", []string{"Fetch"}},
		{"Search the web for a query.", "Search the web for a query.", []string{"Search"}},
		{"Add two numbers.", "Add two numbers.", []string{"Add"}},
		{"Weather is what the sky does.", "Is what the sky does.", []string{"Weather"}},
		{"Weather écrits.", "Écrits.", []string{"Weather"}},
		{"Lookup fetches, then caches, a page.", "Fetches, then caches, a page.", []string{"Lookup"}},
		{"Weather s", "Weather s", []string{"Weather"}},
		{"Anything at all.", "Anything at all.", []string{"", "Other"}},
	} {
		if got := withoutName(c.desc, c.names...); got != c.want {
			t.Errorf("withoutName(%q, %q) = %q, want %q", c.desc, c.names, got, c.want)
		}
	}
}
