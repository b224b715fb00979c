package onion

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// This file is the value keywords a plan applies as it reads (enums,
// formats, bounds, lengths, patterns, item counts), with the validator's
// own functions, and the words of their errors.

// checks are the value keywords of one compiled schema, applied with the
// validator's own functions.
type checks struct {
	enum               []any
	format             *santhosh.Format
	pattern            santhosh.Regexp
	minLen, maxLen     int
	bounds             []bound
	numEnum            []bound // the enum's numbers, ok meaning equal
	minItems, maxItems int
}

// bound is one of minimum, maximum, exclusiveMinimum, exclusiveMaximum:
// a value compared with it must give a result in ok.
type bound struct {
	rat   *big.Rat
	f     float64
	exact bool // f is rat
	ok    func(cmp int) bool
	op    string
}

func newChecks(cs *santhosh.Schema) (*checks, error) {
	c := &checks{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1, format: cs.Format, pattern: cs.Pattern}
	if cs.Enum != nil {
		c.enum = cs.Enum.Values
		for _, e := range c.enum {
			if n, ok := e.(json.Number); ok {
				if r, ok := new(big.Rat).SetString(string(n)); ok {
					f, exact := r.Float64()
					c.numEnum = append(c.numEnum, bound{rat: r, f: f, exact: exact, ok: func(c int) bool { return c == 0 }})
				}
			}
		}
	}
	for _, b := range []struct {
		rat *big.Rat
		op  string
		ok  func(int) bool
	}{
		{cs.Minimum, ">=", func(c int) bool { return c >= 0 }},
		{cs.Maximum, "<=", func(c int) bool { return c <= 0 }},
		{cs.ExclusiveMinimum, ">", func(c int) bool { return c > 0 }},
		{cs.ExclusiveMaximum, "<", func(c int) bool { return c < 0 }},
	} {
		if b.rat != nil {
			f, exact := b.rat.Float64()
			c.bounds = append(c.bounds, bound{rat: b.rat, f: f, exact: exact, ok: b.ok, op: b.op})
		}
	}
	for _, p := range []struct {
		dst *int
		src *int
	}{{&c.minLen, cs.MinLength}, {&c.maxLen, cs.MaxLength}, {&c.minItems, cs.MinItems}, {&c.maxItems, cs.MaxItems}} {
		if p.src != nil {
			*p.dst = *p.src
		}
	}
	return c, nil
}

func (c *checks) checkString(s string) error {
	if c.enum != nil && !slices.ContainsFunc(c.enum, func(e any) bool { es, ok := e.(string); return ok && es == s }) {
		return fmt.Errorf("expected one of %s, got %s", enumList(c.enum), quoteValue(s))
	}
	if c.minLen >= 0 || c.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if c.minLen >= 0 && n < c.minLen {
			return fmt.Errorf("expected at least %d characters, got %d", c.minLen, n)
		}
		if c.maxLen >= 0 && n > c.maxLen {
			return fmt.Errorf("expected at most %d characters, got %d", c.maxLen, n)
		}
	}
	if c.pattern != nil && !c.pattern.MatchString(s) {
		if c.pattern.String() == durationPattern {
			return fmt.Errorf("expected %s, got %s", durationHint, quoteValue(s))
		}
		return fmt.Errorf("expected a string matching %s, got %s", quoteValue(c.pattern.String()), quoteValue(s))
	}
	if c.format != nil && c.format.Validate(s) != nil {
		return fmt.Errorf("expected %s, got %s", formatHint(c.format.Name), quoteValue(s))
	}
	return nil
}

// checkNumber applies enum and bounds to the number literal lit, exactly:
// in float64 where that is exact, with big.Rat otherwise.
func (c *checks) checkNumber(lit string) error {
	if c.enum == nil && c.bounds == nil {
		return nil
	}
	i, err := strconv.ParseInt(lit, 10, 64)
	return c.checkExact(lit, float64(i), err == nil && i > -1<<53 && i < 1<<53)
}

// checkInt is checkNumber for lit, already parsed into n.
func (c *checks) checkInt(n int64, lit string) error {
	if c.enum == nil && c.bounds == nil {
		return nil
	}
	return c.checkExact(lit, float64(n), n > -1<<53 && n < 1<<53)
}

// checkExact is checkNumber for lit, whose value is f when exact.
func (c *checks) checkExact(lit string, f float64, exact bool) error {
	var n *big.Rat
	cmp := func(rat *big.Rat, bf float64, bexact bool) int {
		if exact && bexact {
			switch {
			case f < bf:
				return -1
			case f > bf:
				return 1
			}
			return 0
		}
		if n == nil {
			n, _ = new(big.Rat).SetString(lit) // lit is short: see maxNumberLen
		}
		return n.Cmp(rat)
	}
	if c.enum != nil && !slices.ContainsFunc(c.numEnum, func(b bound) bool { return cmp(b.rat, b.f, b.exact) == 0 }) {
		return fmt.Errorf("expected one of %s, got %s", enumList(c.enum), lit)
	}
	for _, b := range c.bounds {
		if !b.ok(cmp(b.rat, b.f, b.exact)) {
			return fmt.Errorf("expected a number %s %s, got %s", b.op, b.rat.RatString(), lit)
		}
	}
	return nil
}

func (c *checks) checkItems(n int) error {
	if c.minItems >= 0 && n < c.minItems {
		return fmt.Errorf("expected at least %d items, got %d", c.minItems, n)
	}
	if c.maxItems >= 0 && n > c.maxItems {
		return fmt.Errorf("expected at most %d items, got %d", c.maxItems, n)
	}
	return nil
}

// parseInt reads a number literal that JSON Schema counts as an integer
// (5, but also 5.0 and 5e2, as the validator does) into an int64.
func parseInt(lit string) (int64, error) {
	if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return i, nil
	}
	n, err := parseBigInt(lit)
	if err != nil {
		return 0, err
	}
	if !n.IsInt64() {
		return 0, fmt.Errorf("expected integer fitting int64, got %s", lit)
	}
	return n.Int64(), nil
}

// parseUint is parseInt for a uint64.
func parseUint(lit string) (uint64, error) {
	if i, err := strconv.ParseUint(lit, 10, 64); err == nil {
		return i, nil
	}
	n, err := parseBigInt(lit)
	if err != nil {
		return 0, err
	}
	if n.Sign() < 0 || !n.IsUint64() {
		return 0, fmt.Errorf("expected integer from 0 fitting uint64, got %s", lit)
	}
	return n.Uint64(), nil
}

func parseBigInt(lit string) (*big.Int, error) {
	r, ok := new(big.Rat).SetString(lit) // lit is short: see maxNumberLen
	if !ok || !r.IsInt() {
		return nil, fmt.Errorf("expected integer, got number %s", lit)
	}
	return r.Num(), nil
}

// formatHints say, for the model, what a string of a format looks like.
var formatHints = map[string]string{
	"date-time":     "an RFC 3339 date-time such as 2026-01-02T15:04:05Z",
	"date":          "an RFC 3339 date such as 2026-01-02",
	"time":          "an RFC 3339 time such as 15:04:05Z",
	"duration":      "an ISO 8601 duration such as P1DT2H",
	"email":         "an email address such as ada@example.com",
	"hostname":      "a host name such as example.com",
	"ipv4":          "an IPv4 address such as 192.0.2.1",
	"ipv6":          "an IPv6 address such as 2001:db8::1",
	"uri":           "an absolute URI such as https://example.com/page",
	"uri-reference": "a URI reference such as /page or https://example.com/page",
	"uuid":          "a UUID such as 123e4567-e89b-12d3-a456-426614174000",
}

func formatHint(name string) string {
	if h, ok := formatHints[name]; ok {
		return h
	}
	return "a string of format " + quoteValue(name)
}

// quoteValue quotes a string value as JSON does, the one style every
// message uses.
func quoteValue(s string) string {
	b, _ := json.Marshal(s)
	return truncate(string(b), 80)
}

func enumList(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		b, _ := json.Marshal(v)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
