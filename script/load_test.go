package script_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion"
	"github.com/onionkit/onion/script"
)

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"syntax", "def f(:\n    pass\n", "bad.star:1:8: "},
		{"syntax on a later line", "def f():\n    \"\"\"F.\"\"\"\n    return 1 +\n", "bad.star:3:"},
		{"undefined name", "def f():\n    \"\"\"F.\"\"\"\n    return nope\n", "bad.star:3:12: undefined: nope"},
		{"while", "def f():\n    \"\"\"F.\"\"\"\n    while True:\n        pass\n", "bad.star:3:5: this Starlark dialect does not support while loops"},
		{"load", "load(\"x.star\", \"y\")\n", "bad.star:1:1: load is not allowed"},
		{"request at the top level", "x = request(\"GET\", \"/\")\n", "bad.star:1:12: request may only be called by a tool"},
		{"runtime error at the top level", "x = 1 // 0\n", "bad.star:1:7: floored division by zero"},
		{"endless top level", "x = [i for i in range(100000000)]\n", "step limit of 1000000"},
		{"unknown directive", "def f():\n    \"\"\"F.\n\n    onion:intent read\n    onion:retry\n    \"\"\"\n", "bad.star:5: f: unknown directive onion:retry"},
		{"unknown intent", "def f():\n    \"\"\"F.\n\n    onion:intent peek\n    \"\"\"\n", `bad.star:4: f: directive onion:intent: unknown intent "peek"`},
		{"unknown type", "def f(n):\n    \"\"\"F.\n\n    n (int): a number\n    \"\"\"\n", "bad.star:4: f: parameter n: unknown type (int)"},
		{"type against default", "def f(n=\"x\"):\n    \"\"\"F.\n\n    n (integer): a number\n    \"\"\"\n", `bad.star:4: f: parameter n is declared (integer) but its default is "x"`},
		{"no docstring", "def f():\n    return 1\n", "bad.star:1:1: f has no docstring"},
		{"kwargs", "def f(**kw):\n    \"\"\"F.\"\"\"\n", "*args and **kwargs cannot be tool parameters"},
		{"no tools", "def _helper():\n    pass\n", "defines no tools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := script.Parse("bad.star", tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "broken.star")
	if err := os.WriteFile(path, []byte("def ok_tool():\n    \"\"\"Fine.\"\"\"\n    return 1 +\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := script.Load(path); err == nil || !strings.Contains(err.Error(), path+":3:") {
		t.Errorf("err = %v, want %s:3:", err, path)
	}
	if _, err := script.Load(filepath.Join(dir, "missing.star")); err == nil || !strings.Contains(err.Error(), "missing.star") {
		t.Errorf("missing file: err = %v", err)
	}
	tools, err := script.Load(filepath.Join("testdata", "tickets.star"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name())
	}
	if got := strings.Join(names, " "); got != "ticket_text search_tickets comment_ticket delete_ticket" {
		t.Errorf("tools = %s (the _ helper must not be one)", got)
	}
}

func TestBadOptions(t *testing.T) {
	for _, tc := range []struct {
		opt  script.Option
		want string
	}{
		{script.BaseURL("ftp://x"), "want an http or https URL"},
		{script.BaseURL("http://x/?a=1"), "must not have a query"},
		{script.BaseURL("http://u:p@x/"), "use script.Header for credentials"},
		{script.Header("Bad Name", "x"), "not a valid header name"},
		{script.Header("X", "a\r\nb"), "must not contain CR"},
		{script.MaxRequests(-1), "must not be negative"},
		{script.Timeout(0), "must be positive"},
		{script.MaxSteps(0), "must be positive"},
		{script.MaxResponseBytes(0), "must be positive"},
	} {
		_, err := script.Parse("t.star", ticketsStar, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want it to contain %q", err, tc.want)
		}
	}
}

func TestParameterTypes(t *testing.T) {
	tools, err := script.Parse("types.star", `
def typed(id, n, score, flag, items, opts, limit=10, ratio=0.5, verbose=False, tags=[], extra={}, name="x", note=None, when=None):
    """Shows every parameter type.

    id: an id, a string by default
    n (integer): a count
    score (number): a score
    flag (boolean): a flag
    items (array): some items
    opts (object): some options
    limit: at most this many
      results, wrapped
    ratio (number): a ratio
    when (integer): a time, optional
    """
    return [type(v) for v in [id, n, score, flag, items, opts, limit, ratio, verbose, tags, extra, name, note, when]]
`)
	if err != nil {
		t.Fatal(err)
	}
	tl := tools[0]
	want := `{"type":"object","properties":{
		"id":{"type":"string","description":"an id, a string by default"},
		"n":{"type":"integer","description":"a count"},
		"score":{"type":"number","description":"a score"},
		"flag":{"type":"boolean","description":"a flag"},
		"items":{"type":"array","description":"some items"},
		"opts":{"type":"object","description":"some options"},
		"limit":{"type":"integer","description":"at most this many results, wrapped","default":10},
		"ratio":{"type":"number","description":"a ratio","default":0.5},
		"verbose":{"type":"boolean","default":false},
		"tags":{"type":"array","default":[]},
		"extra":{"type":"object","default":{}},
		"name":{"type":"string","default":"x"},
		"note":{"type":"string"},
		"when":{"type":"integer","description":"a time, optional"}},
		"required":["id","n","score","flag","items","opts"],
		"additionalProperties":false}`
	assertJSONEqual(t, tl.Schema(), want)
	if got := tl.Description(); got != "Shows every parameter type." {
		t.Errorf("description = %q", got)
	}
	out, err := tl.Call(context.Background(), `{"id":"a","n":3,"score":2,"flag":true,"items":[1],"opts":{"k":1}}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["string","int","float","bool","list","dict","int","float","bool","list","dict","string","NoneType","NoneType"]`; out != want {
		t.Errorf("the script got types %s, want %s", out, want)
	}
	// The schema is enforced before the script runs.
	for _, args := range []string{`{"id":"a"}`, `{"id":1,"n":3,"score":2,"flag":true,"items":[],"opts":{}}`, `{"id":"a","n":3,"score":2,"flag":true,"items":[],"opts":{},"other":1}`} {
		if _, err := tl.Call(context.Background(), args); err == nil {
			t.Errorf("%s was accepted", args)
		}
	}
}

func assertJSONEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want: %v", err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("schema = %s\nwant     %s", gb, wb)
	}
}

func TestDirectives(t *testing.T) {
	tools, err := script.Parse("d.star", `
def plain():
    """Declares nothing."""

def reads():
    """Reads.

    onion:intent read
    """

def writes_again():
    """Writes, safely again.

    onion:intent write
    onion:idempotent
    """

def removes():
    """Removes, with approval.

    onion:intent delete
    onion:approve
    """
`)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		intent     onion.Intent
		idempotent bool
		approve    bool
	}{
		{onion.Write, false, false},
		{onion.Read, false, false},
		{onion.Write, true, false},
		{onion.Delete, false, true},
	} {
		tl := tools[i]
		if tl.Intent() != want.intent || tl.Idempotent() != want.idempotent || tl.NeedsApproval(context.Background(), onion.Call{}) != want.approve {
			t.Errorf("%s: intent %s, idempotent %v, approve %v; want %+v", tl.Name(), tl.Intent(), tl.Idempotent(), tl.NeedsApproval(context.Background(), onion.Call{}), want)
		}
		if strings.Contains(tl.Description(), "onion:") {
			t.Errorf("%s: the description shows directives: %q", tl.Name(), tl.Description())
		}
	}
}

func TestResults(t *testing.T) {
	tools, err := script.Parse("r.star", `
def result(kind):
    """Returns a value of the kind asked for."""
    values = {
        "string": "plain text",
        "dict": {"b": 1, "a": [True, None, 1.5]},
        "none": None,
        "int": 42,
        "big": 123456789012345678901234567890,
        "tuple": (1, "x"),
        "json": json.decode('{"k": [1, 2]}'),
    }
    return values[kind]

def bad_result():
    """Returns a function."""
    return bad_result

def _helper(x):
    return 1 // x

def divide():
    """Fails in a helper."""
    return _helper(0)

def fails():
    """Fails on purpose."""
    fail("no such ticket")

def recurse():
    """Calls itself."""
    return recurse()

def cyclic():
    """Returns a list that holds itself."""
    l = []
    l.append(l)
    return l

def nan():
    """Returns NaN."""
    return {"x": float("nan")}
`)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]*onion.Tool{}
	for _, tl := range tools {
		m[tl.Name()] = tl
	}
	for kind, want := range map[string]string{
		"string": "plain text",
		"dict":   `{"a":[true,null,1.5],"b":1}`,
		"none":   "",
		"int":    "42",
		"big":    "123456789012345678901234567890",
		"tuple":  `[1,"x"]`,
		"json":   `{"k":[1,2]}`,
	} {
		if got := mustCall(t, m, "result", `{"kind":"`+kind+`"}`); got != want {
			t.Errorf("%s: got %s, want %s", kind, got, want)
		}
	}
	for name, want := range map[string]string{
		"bad_result": "bad_result returned a value the model cannot read: cannot convert a function to JSON",
		"divide":     "r.star:20:14: floored division by zero (in _helper, called from divide at r.star:24:19)",
		"fails":      "r.star:28:9: fail: no such ticket (in fails)",
		"cyclic":     "cyclic returned a value the model cannot read: [0]: [0]: [0]:",
		"nan":        `nan returned a value the model cannot read: ["x"]: cannot convert nan to JSON`,
		"recurse":    "r.star:32:12: function recurse called recursively (in recurse, called from recurse at r.star:32:19)",
	} {
		if _, err := call(t, m, name, `{}`); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %v\nwant %s", name, err, want)
		}
	}
}
