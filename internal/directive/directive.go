// Package directive reads the onion: directives of doc comments and
// docstrings (onion:intent read, onion:idempotent, onion:additive,
// onion:approve), which Go
// tools and script tools share.
package directive

import (
	"fmt"
	"strings"
)

// Set is what a doc comment's directives declare.
type Set struct {
	Intent     string // "read", "write", "delete", or "" when none is declared
	Idempotent bool
	Additive   bool // a write that only adds (onion.Additive)
	Approve    bool
}

// Parse applies one directive, given without its "onion:" prefix.
func (d *Set) Parse(s string) error {
	word, arg, _ := strings.Cut(strings.TrimSpace(s), " ")
	arg = strings.TrimSpace(arg)
	switch word {
	case "intent":
		switch arg {
		case "read", "write", "delete":
			d.Intent = arg
		default:
			return fmt.Errorf("directive onion:intent: unknown intent %q: use read, write or delete", arg)
		}
	case "idempotent":
		d.Idempotent = true
	case "additive":
		d.Additive = true
	case "approve":
		d.Approve = true
	default:
		return fmt.Errorf("unknown directive onion:%s: known are onion:intent read|write|delete, onion:idempotent, onion:additive, onion:approve", word)
	}
	return nil
}
