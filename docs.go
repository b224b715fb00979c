package onion

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/onionkit/onion/internal/directive"
)

// toolDoc is what a doc comment says about a tool: the description the
// model reads, the parameters' descriptions and the onion: directives.
type toolDoc struct {
	description string
	params      map[string]string
	directives  directive.Set
}

var paramLineRE = regexp.MustCompile(`^\s*(?:[-*]\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.+)$`)

// parseDoc splits doc comment lines into the tool description (the first
// paragraph), parameter descriptions (a paragraph made only of "name: text"
// lines naming known parameters) and directives (lines "onion:..."), which
// are never sent to the model. Later paragraphs are not sent either.
func parseDoc(lines []string, params []string) (toolDoc, error) {
	d := toolDoc{params: map[string]string{}}
	known := make(map[string]bool, len(params))
	for _, p := range params {
		known[p] = true
	}
	var paragraphs [][]string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paragraphs = append(paragraphs, cur)
			cur = nil
		}
	}
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(trimmed, "onion:"); ok {
			if err := d.directives.Parse(rest); err != nil {
				return d, err
			}
			continue
		}
		if trimmed == "" {
			flush()
			continue
		}
		cur = append(cur, trimmed)
	}
	flush()
	for i, p := range paragraphs {
		if i > 0 && len(params) > 0 {
			if err := unknownParamLine(p, known, params); err != nil {
				return d, err
			}
		}
		if described := paramParagraph(p, known); described != nil {
			for k, v := range described {
				d.params[k] = v
			}
			continue
		}
		if d.description == "" {
			d.description = strings.Join(p, " ")
		}
	}
	return d, nil
}

// unknownParamLine finds, in a paragraph after the description, a line
// that reads as a parameter's description ("query: the text to find", a
// lower-case name, a colon) but names no parameter, when the paragraph
// describes parameters: every line of it reads so, or it describes a known
// one. Such a line is a mistake the model would pay for (a renamed
// parameter, a typo), so it is refused, naming the parameters there are.
func unknownParamLine(lines []string, known map[string]bool, params []string) error {
	var unknown string
	describes, all := false, true
	for _, l := range lines {
		m := paramLineRE.FindStringSubmatch(l)
		if m == nil {
			all = false
			continue
		}
		switch r, _ := utf8.DecodeRuneInString(m[1]); {
		case known[m[1]]:
			describes = true
		case unknown == "" && unicode.IsLower(r):
			unknown = l
		}
	}
	if unknown == "" || !describes && !all {
		return nil
	}
	return fmt.Errorf("doc comment line %q describes no parameter: the parameters are %s; name one of them, or reword the line", unknown, strings.Join(params, ", "))
}

// paramParagraph returns the parameter descriptions of a paragraph made
// only of "name: text" lines for known parameters, or nil.
func paramParagraph(lines []string, known map[string]bool) map[string]string {
	out := make(map[string]string, len(lines))
	last := ""
	for _, l := range lines {
		m := paramLineRE.FindStringSubmatch(l)
		if m == nil || !known[m[1]] {
			if last == "" || strings.HasPrefix(l, "-") {
				return nil
			}
			out[last] += " " + l // a wrapped description line
			continue
		}
		last = m[1]
		out[last] = strings.TrimSpace(m[2])
	}
	return out
}

// withoutName drops the Go name a tool's description starts with, as a
// doc comment does by convention ("Weather reports the weather in a
// city"): the model is sent the tool's name beside it, so it reads
// "Reports the weather in a city." Any of names may be the one: a
// method's doc starts with the method's name, rarely with Type.Method.
// The name goes only when a verb follows it as Go doc comments have it,
// a word in lower case ending in s ("reports", "is", "fetches"): a doc in
// the imperative that happens to start with the name ("Search the web
// for a query") is kept as it is, and so is one that does not start with
// the name and a space, or that would be left empty.
func withoutName(desc string, names ...string) string {
	for _, name := range names {
		if name == "" {
			continue
		}
		rest, ok := strings.CutPrefix(desc, name+" ")
		if rest = strings.TrimLeft(rest, " "); !ok || !isVerb(rest) {
			continue
		}
		r, size := utf8.DecodeRuneInString(rest)
		return string(unicode.ToUpper(r)) + rest[size:]
	}
	return desc
}

// isVerb reports whether s starts with a word of lower-case letters that
// ends in s, as the verb after a doc comment's name does.
func isVerb(s string) bool {
	end := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) })
	if end < 0 {
		end = len(s)
	}
	word := s[:end]
	for _, r := range word {
		if !unicode.IsLower(r) {
			return false
		}
	}
	return len(word) > 1 && strings.HasSuffix(word, "s")
}

// snakeCase turns a Go name into a tool name: CreateTicket → create_ticket,
// GetHTTPStatus → get_http_status.
func snakeCase(s string) string {
	var b strings.Builder
	r := []rune(s)
	for i, c := range r {
		upper := c >= 'A' && c <= 'Z'
		if upper && i > 0 {
			prevLower := r[i-1] >= 'a' && r[i-1] <= 'z' || r[i-1] >= '0' && r[i-1] <= '9'
			nextLower := i+1 < len(r) && r[i+1] >= 'a' && r[i+1] <= 'z'
			prevUpper := r[i-1] >= 'A' && r[i-1] <= 'Z'
			if prevLower || (prevUpper && nextLower) {
				b.WriteByte('_')
			}
		}
		if upper {
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}
