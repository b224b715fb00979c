package onion

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// A JSON Schema pattern that Go's regexp cannot compile (lookaround,
// backreferences) is matched by regexp2, which backtracks: a pattern such
// as ^(a+)+(?=!)$ takes exponential time in its input. The schema may come
// from a tool's tags, a raw schema, or an MCP server, and the input from the
// model, so every regexp2 match is bounded: one match by matchLimit (as
// regexp2's clock measures it, which ticks every 100ms), all the matches of
// one call by callMatchLimit, and by the call's context, checked before
// each match. A match that gives up rejects the arguments: the tool is not
// run, and the model reads which value and which pattern gave up.
const (
	matchLimit     = 100 * time.Millisecond
	callMatchLimit = time.Second
)

// patterns is what the regexp2 patterns of one compiled schema share: the
// call whose arguments they are checking now. regexp2 takes no context and
// the validator calls MatchString with the string alone, so a call's
// context reaches the patterns through here, one call at a time: a call
// holds gate while it checks, and run is that call's.
type patterns struct {
	gate chan struct{} // nil when the schema has no regexp2 pattern
	run  *patternRun   // guarded by gate: the holder's, nil between calls
}

// patternRun is one call's use of the patterns.
type patternRun struct {
	ctx    context.Context
	end    time.Time // when the call's callMatchLimit is spent
	gaveUp *gaveUp   // the first match that gave up
	// undecided holds each pattern and value whose match gave up or was
	// not tried after gaveUp: the validator reports them as mismatches,
	// which they are not known to be.
	undecided map[[2]string]bool
}

// gaveUp is a match that did not finish: its pattern, its value, how long
// it ran (when it was tried at all) and why it stopped.
type gaveUp struct {
	pattern, value string
	tried          bool
	after          time.Duration
	why            string
}

// compile is the validator's regexp engine: a pattern compiles with Go's
// regexp, whose matching time is linear, when it can; otherwise with
// regexp2, which handles all of ECMA-262, bounded as above.
func (ps *patterns) compile(pattern string) (santhosh.Regexp, error) {
	if re, err := regexp.Compile(pattern); err == nil {
		return re, nil
	}
	re, err := regexp2.Compile(pattern, regexp2.ECMAScript)
	if err != nil {
		return nil, fmt.Errorf("pattern %q is not an ECMA-262 regular expression: %w", pattern, err)
	}
	re.MatchTimeout = matchLimit
	if ps.gate == nil { // the schema is compiled before anything shares ps
		ps.gate = make(chan struct{}, 1)
	}
	return &ecmaRegexp{re: re, ps: ps}, nil
}

// hold binds ctx to the patterns for one call's check, waiting while
// another call checks with them; release ends the hold. Schemas without
// regexp2 patterns (nearly all) cost nothing. The error says why the
// arguments could not be checked: ctx ended while waiting.
func (ps *patterns) hold(ctx context.Context) (release func(), err error) {
	if ps == nil || ps.gate == nil {
		return func() {}, nil
	}
	select {
	case ps.gate <- struct{}{}:
	default: // wait, unless ctx ends first
		select {
		case ps.gate <- struct{}{}:
		case <-ctx.Done():
			return nil, fmt.Errorf("arguments: not checked: %s while another call of the tool was being checked", ctxEnded(ctx.Err()))
		}
	}
	ps.run = &patternRun{ctx: ctx, end: time.Now().Add(callMatchLimit)}
	return func() {
		ps.run = nil
		<-ps.gate
	}, nil
}

// current is the run of the call holding ps, or nil.
func (ps *patterns) current() *patternRun {
	if ps == nil || ps.gate == nil {
		return nil
	}
	return ps.run
}

// ecmaRegexp is a pattern compiled by regexp2, matched under the limits
// of the call that holds its patterns.
type ecmaRegexp struct {
	re *regexp2.Regexp
	ps *patterns
}

func (r *ecmaRegexp) MatchString(s string) bool {
	run := r.ps.run
	if run == nil { // no call holds the patterns: matchLimit still bounds it
		ok, err := r.re.MatchString(s)
		return ok && err == nil
	}
	return run.match(r.re, s)
}

func (r *ecmaRegexp) String() string { return r.re.String() }

// match matches s against re unless the call has given up already or is
// over, and reports a match that gives up as no match, recording it.
func (run *patternRun) match(re *regexp2.Regexp, s string) bool {
	if run.gaveUp == nil {
		var why string
		switch {
		case run.ctx.Err() != nil:
			why = ctxEnded(run.ctx.Err())
		case !time.Now().Before(run.end):
			why = fmt.Sprintf("the patterns of one call may take %v in all", callMatchLimit)
		}
		g := &gaveUp{pattern: re.String(), value: s, why: why}
		if why == "" {
			start := time.Now()
			ok, err := re.MatchString(s)
			if err == nil {
				return ok
			}
			g.tried, g.after = true, time.Since(start).Round(time.Millisecond)
			g.why = fmt.Sprintf("one match may take %v", matchLimit)
		}
		run.gaveUp = g
	}
	if run.undecided == nil {
		run.undecided = map[[2]string]bool{}
	}
	run.undecided[[2]string{re.String(), s}] = true
	return false
}

// ctxEnded says in words why a call's context ended.
func ctxEnded(err error) string {
	if err == context.DeadlineExceeded {
		return "the call's deadline passed"
	}
	return "the call was canceled"
}

// problem is the line an *ArgumentError gives for the match that gave up,
// at the first place in inst that holds its value.
func (g *gaveUp) problem(inst any) string {
	at, _ := findString(inst, g.value, nil)
	n := utf8.RuneCountInString(g.value)
	if !g.tried {
		return fmt.Sprintf("%s: the pattern %s was not tried on the %d characters (%s), so the value could not be checked",
			fieldPath(at), quoteValue(g.pattern), n, g.why)
	}
	return fmt.Sprintf("%s: the pattern %s gave up after %v on %d characters (%s), so the value could not be checked; send a shorter value",
		fieldPath(at), quoteValue(g.pattern), g.after, n, g.why)
}

// findString finds the path of the first string value (or else property
// name) in v equal to s, visiting object members in key order.
func findString(v any, s string, at []string) ([]string, bool) {
	switch x := v.(type) {
	case string:
		return at, x == s
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p, ok := findString(x[k], s, append(slices.Clip(at), k)); ok {
				return p, true
			}
		}
		if slices.Contains(keys, s) {
			return at, true
		}
	case []any:
		for i, e := range x {
			if p, ok := findString(e, s, append(slices.Clip(at), fmt.Sprint(i))); ok {
				return p, true
			}
		}
	}
	return at, false
}
