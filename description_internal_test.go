package onion

import "testing"

// TestWithoutName: a description loses the Go name it starts with only
// when the name is a whole word followed by more text.
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
		{"Search eBay for an item.", "eBay for an item.", []string{"Search"}},
		{"Get iOS versions.", "iOS versions.", []string{"Get"}},
		{"Weather élève la voix.", "Élève la voix.", []string{"Weather"}},
		{"Fetch 3 pages.", "3 pages.", []string{"Fetch"}},
		{"Anything at all.", "Anything at all.", []string{"", "Other"}},
	} {
		if got := withoutName(c.desc, c.names...); got != c.want {
			t.Errorf("withoutName(%q, %q) = %q, want %q", c.desc, c.names, got, c.want)
		}
	}
}
