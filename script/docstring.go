package script

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/onionkit/onion/internal/directive"
)

// funcDoc is what a function's docstring says, read the way onion reads a
// Go doc comment: the first paragraph is the description, a paragraph of
// "name: text" lines naming parameters describes them, and onion: lines are
// directives, never sent to the model.
type funcDoc struct {
	description string
	params      map[string]paramDoc
	directives  directive.Set
}

type paramDoc struct {
	text     string
	typ      string // the (type) annotation, "" if none
	typeLine int    // the annotation's line offset in the docstring
}

var paramLineRE = regexp.MustCompile(`^\s*(?:[-*]\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$`)

// jsonTypes are the types a docstring may give a parameter.
var jsonTypes = map[string]bool{"string": true, "integer": true, "number": true, "boolean": true, "array": true, "object": true}

// docLineError is an error on a line of a docstring, counted from 0.
type docLineError struct {
	line int
	err  error
}

func (e *docLineError) Error() string { return e.err.Error() }
func (e *docLineError) Unwrap() error { return e.err }

// parseDocstring reads doc for the function with the given parameters.
func parseDocstring(doc string, params []string) (funcDoc, error) {
	d := funcDoc{params: map[string]paramDoc{}}
	known := make(map[string]bool, len(params))
	for _, p := range params {
		known[p] = true
	}
	type line struct {
		text string
		n    int
	}
	var paragraphs [][]line
	var cur []line
	flush := func() {
		if len(cur) > 0 {
			paragraphs = append(paragraphs, cur)
			cur = nil
		}
	}
	for n, raw := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(raw)
		if rest, ok := strings.CutPrefix(trimmed, "onion:"); ok {
			if err := d.directives.Parse(rest); err != nil {
				return d, &docLineError{n, err}
			}
			continue
		}
		if trimmed == "" {
			flush()
			continue
		}
		cur = append(cur, line{trimmed, n})
	}
	flush()
	for _, p := range paragraphs {
		described := map[string]paramDoc{}
		last := ""
		isParams := true
		for _, l := range p {
			m := paramLineRE.FindStringSubmatch(l.text)
			if m == nil || !known[m[1]] {
				if last == "" || strings.HasPrefix(l.text, "-") {
					isParams = false
					break
				}
				pd := described[last]
				pd.text += " " + l.text // a wrapped description line
				described[last] = pd
				continue
			}
			last = m[1]
			described[last] = paramDoc{text: strings.TrimSpace(m[3]), typ: strings.TrimSpace(m[2]), typeLine: l.n}
		}
		if isParams {
			for name, pd := range described {
				if pd.typ != "" && !jsonTypes[pd.typ] {
					return d, &docLineError{pd.typeLine, fmt.Errorf("parameter %s: unknown type (%s): use (string), (integer), (number), (boolean), (array) or (object)", name, pd.typ)}
				}
				d.params[name] = pd
			}
			continue
		}
		if d.description == "" {
			texts := make([]string, len(p))
			for i, l := range p {
				texts[i] = l.text
			}
			d.description = strings.Join(texts, " ")
		}
	}
	return d, nil
}
