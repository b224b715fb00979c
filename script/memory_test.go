package script_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/onionkit/onion/script"
)

// bombs are scripts that build values of gigabytes, in the ways an
// attacker found: each must end its call with an error naming MaxMemory.
var bombs = map[string]string{
	"repeat_list":   `[0] * (1 << 28)`,
	"repeat_string": `"x" * (1 << 32)`,
	"join_doubled":  `",".join(["x" * (1 << 20)] * 4096)`,
	"concat_loop":   `_double("x", 40)`,
	"comprehension": `[i for i in range(1 << 30)]`,
	"nested":        `[[j for j in range(1000)] for i in range(1 << 20)]`,
	"json_encode":   `json.encode(_tree(40))`,
	"dict_growth":   `_fill({}, 1 << 30)`,
	"replace":       `("x" * 65536).replace("x", "x" * 65536)`,
	"list_range":    `list(range(1 << 28))`,
	"extend_self":   `_extend([0], 40)`,
	"format":        `"{}{}{}{}".format(_tree(30))`,
	"http_body":     `request("GET", "/big").json()`,
}

const bombHelpers = `
def _double(s, n):
    for _ in range(n):
        s = s + s
    return len(s)

def _tree(n):
    x = [1]
    for _ in range(n):
        x = [x, x]
    return x

def _fill(d, n):
    for i in range(n):
        d[i] = i
    return len(d)

def _extend(l, n):
    for _ in range(n):
        l += l
    return len(l)

def fine():
    """Answers after a bomb went off, as a call of the same tool would."""
    return ",".join(["ok"] * 3)
`

// TestMemoryBombs runs each bomb as a tool call in a child process whose
// data segment is capped at 3 GiB, so that a bomb the limits miss crashes
// the child, not the test run.
func TestMemoryBombs(t *testing.T) {
	if os.Getenv("ONION_SCRIPT_BOMBS") == "1" {
		runBombs(t)
		return
	}
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is not installed: the bombs are only run with the child's memory capped")
	}
	cmd := exec.Command(prlimit, "--data=3221225472", "--", os.Args[0], "-test.run=^TestMemoryBombs$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "ONION_SCRIPT_BOMBS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child running the bombs failed (%v); a crash here is a bomb the limits missed:\n%s", err, tail(string(out), 4000))
	}
	if !strings.Contains(string(out), "--- PASS: TestMemoryBombs") {
		t.Fatalf("the child did not run the bombs:\n%s", tail(string(out), 4000))
	}
}

func runBombs(t *testing.T) {
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "["+strings.Repeat("0,", 256<<10)+"0]")
	}))
	defer app.Close()
	var src strings.Builder
	src.WriteString(bombHelpers)
	for name, expr := range bombs {
		src.WriteString("\ndef " + name + "():\n    \"\"\"Builds too much.\"\"\"\n    return " + expr + "\n")
	}
	tools, err := script.Parse("bombs.star", src.String(), script.BaseURL(app.URL),
		script.MaxMemory(1<<20), script.MaxSteps(100_000_000))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, tool := range tools {
		byName[tool.Name()] = i
	}
	for name := range bombs {
		t.Run(name, func(t *testing.T) {
			_, err := tools[byName[name]].Call(context.Background(), `{}`)
			if err == nil || !strings.Contains(err.Error(), "script.MaxMemory") {
				t.Fatalf("got %v, want an error naming script.MaxMemory", err)
			}
			t.Log(err)
			out, err := tools[byName["fine"]].Call(context.Background(), `{}`)
			if err != nil || !strings.Contains(out, "ok,ok,ok") {
				t.Fatalf("the call after the bomb: got %v, %v; want ok,ok,ok", out, err)
			}
		})
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// TestGuardKeepsMeaning checks that the rewrite behind MaxMemory leaves
// what scripts compute, and the errors they get, as the interpreter has
// them.
func TestGuardKeepsMeaning(t *testing.T) {
	cases := []struct{ expr, want string }{
		{`_alias()`, `[1,2,3]`},
		{`_index_aug()`, `{"a":[1,2],"n":5,"s":"xy"}`},
		{`_count_calls()`, `[1,[2]]`},
		{`[0, 1, 2, 3, 4][::-2] + [0, 1, 2][-2:]`, `[4,2,0,1,2]`},
		{`"abcdef"[1:4] + "abcdef"[::-1]`, `bcdfedcba`},
		{`"%s-%d" % ("a", 1) + "{}".format([1]) + str(2) + repr("q")`, `a-1[1]2"q"`},
		{`getattr("a,b", "split")(",") + sorted({"b": 1, "a": 2}) + list(reversed((1, 2)))`, `["a","b","a","b",2,1]`},
		{`{"a": 1} | {"b": 2}`, `{"a":1,"b":2}`},
		{`json.decode(json.encode({"k": [1, 2]}))`, `{"k":[1,2]}`},
	}
	var src strings.Builder
	src.WriteString(`
def _alias():
    l = [1]
    m = l
    l += [2, 3]
    return m

def _index_aug():
    d = {"a": [1], "n": 2, "s": "x"}
    d["a"] += [2]
    d["n"] *= 2
    d["n"] += 1
    d["s"] += "y"
    return d

def _count_calls():
    calls = []
    l = [[], []]
    def at():
        calls.append(1)
        return 1
    l[at()] += [2]
    return [len(calls), l[1]]
`)
	for i, c := range cases {
		src.WriteString("\ndef case" + string(rune('a'+i)) + "():\n    \"\"\"A case.\"\"\"\n    return " + c.expr + "\n")
	}
	src.WriteString("\ndef typo():\n    \"\"\"Misspells a method.\"\"\"\n    return \"a\".uper()\n")
	src.WriteString("\ndef frozen():\n    \"\"\"Extends a frozen list.\"\"\"\n    l = _FROZEN\n    l += [1]\n")
	tools, err := script.Parse("meaning.star", "_FROZEN = [0]\n"+src.String())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, tool := range tools {
		byName[tool.Name()] = i
	}
	for i, c := range cases {
		out, err := tools[byName["case"+string(rune('a'+i))]].Call(context.Background(), `{}`)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%s: got %s, %v; want %s", c.expr, out, err, c.want)
		}
	}
	if _, err := tools[byName["typo"]].Call(context.Background(), `{}`); err == nil || !strings.Contains(err.Error(), "string has no .uper field or method (did you mean .upper?)") {
		t.Errorf("a misspelt method: got %v, want the interpreter's error with its hint", err)
	}
	if _, err := tools[byName["frozen"]].Call(context.Background(), `{}`); err == nil || !strings.Contains(err.Error(), "cannot apply += to frozen list") {
		t.Errorf("+= on a frozen list: got %v, want the interpreter's error", err)
	}
}
