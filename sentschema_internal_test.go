package onion

import (
	"encoding/json"
	"testing"
)

// js is s as a JSON string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestSentFormWalksOnlySchemas: additionalProperties false goes from
// every schema inside the parameters, and stays in values that are data;
// a duration's pattern goes only where its description says it in words.
func TestSentFormWalksOnlySchemas(t *testing.T) {
	in := `{"type":"object","properties":{` +
		`"a":{"type":"object","properties":{"additionalProperties":{"type":"boolean"}},"additionalProperties":false},` +
		`"b":{"type":"array","items":{"type":"object","additionalProperties":false}},` +
		`"c":{"anyOf":[{"type":"object","additionalProperties":false},{"type":"null"}]},` +
		`"d":{"type":"object","default":{"additionalProperties":false},"enum":[{"additionalProperties":false}]},` +
		`"e":{"type":"object","additionalProperties":{"type":"object","additionalProperties":false}},` +
		`"f":{"type":"string","description":"<b> & 1.50"},` +
		`"g":{"type":"string","pattern":` + js(durationPattern) + `,"description":` + js("how long ("+durationDoc+")") + `},` +
		`"h":{"type":"string","pattern":` + js(durationPattern) + `,"description":"how long"},` +
		`"i":{"type":"string","pattern":"^[a-z]+$","description":` + js(durationDoc) + `}},` +
		`"additionalProperties":false,"required":["a"]}`
	want := `{"type":"object","properties":{` +
		`"a":{"type":"object","properties":{"additionalProperties":{"type":"boolean"}}},` +
		`"b":{"type":"array","items":{"type":"object"}},` +
		`"c":{"anyOf":[{"type":"object"},{"type":"null"}]},` +
		`"d":{"type":"object","default":{"additionalProperties":false},"enum":[{"additionalProperties":false}]},` +
		`"e":{"type":"object","additionalProperties":{"type":"object"}},` +
		`"f":{"type":"string","description":"<b> & 1.50"},` +
		`"g":{"type":"string","description":` + js("how long ("+durationDoc+")") + `},` +
		`"h":{"type":"string","pattern":` + js(durationPattern) + `,"description":"how long"},` +
		`"i":{"type":"string","pattern":"^[a-z]+$","description":` + js(durationDoc) + `}},` +
		`"required":["a"]}`
	got, err := sentForm([]byte(in))
	if err != nil || string(got) != want {
		t.Errorf("sentForm = %s, %v\nwant       %s", got, err, want)
	}
}
