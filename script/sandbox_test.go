package script_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onionkit/onion/script"
)

const verbsStar = `
def reader(method):
    """Sends method as a read.

    onion:intent read
    """
    return request(method, "/echo").status

def writer(method):
    """Sends method as a write.

    onion:intent write
    """
    return request(method, "/echo").status

def deleter(method):
    """Sends method as a delete.

    onion:intent delete
    """
    return request(method, "/echo").status

def undeclared(method):
    """Sends method, declaring nothing."""
    return request(method, "/echo").status
`

func TestIntentLimitsMethods(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, verbsStar)
	for _, tc := range []struct {
		tool, method, wantErr string
	}{
		{"reader", "GET", ""},
		{"reader", "head", ""},
		{"reader", "POST", "POST is not allowed for a read tool, which may only GET, HEAD"},
		{"reader", "PUT", "PUT is not allowed for a read tool"},
		{"reader", "DELETE", "DELETE is not allowed for a read tool"},
		{"writer", "POST", ""},
		{"writer", "PUT", ""},
		{"writer", "PATCH", ""},
		{"writer", "DELETE", "DELETE is not allowed for a write tool"},
		{"undeclared", "POST", ""},
		{"undeclared", "DELETE", "DELETE is not allowed for a write tool"},
		{"deleter", "DELETE", ""},
		{"deleter", "TRACE", `method "TRACE" is not allowed`},
	} {
		t.Run(tc.tool+" "+tc.method, func(t *testing.T) {
			before := len(a.seen())
			out, err := call(t, tools, tc.tool, fmt.Sprintf(`{"method":%q}`, tc.method))
			if tc.wantErr == "" {
				if err != nil || out != "200" {
					t.Fatalf("= %q, %v; want 200", out, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			if n := len(a.seen()) - before; n != 0 {
				t.Errorf("a refused request reached the app %d times", n)
			}
		})
	}
}

func TestPathStaysInApp(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def get(path):
    """Gets path.

    onion:intent read
    """
    answer = request("GET", path)
    return answer.json()["path"] if answer.status == 200 else answer.status
`)
	for _, tc := range []struct {
		path, want, wantErr string
	}{
		{path: "/echo", want: "/echo"},
		{path: "/echo/../admin", wantErr: "must not contain .."},
		{path: "/..", wantErr: "must not contain .."},
		{path: "/echo?admin=1", wantErr: "must not contain ? or #: pass query parameters as query="},
		{path: "/echo#x", wantErr: "must not contain ? or #"},
		{path: "echo", wantErr: "must start with /"},
		{path: "http://evil.example/echo", wantErr: "must start with /"},
		{path: `/echo\..\x`, wantErr: "must not contain"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			args := fmt.Sprintf(`{"path":%q}`, tc.path)
			out, err := call(t, tools, "get", args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || out != tc.want {
				t.Fatalf("= %q, %v; want %q", out, err, tc.want)
			}
		})
	}
	// A path that looks like a host is still a path on the app.
	before := len(a.seen())
	if _, err := call(t, tools, "get", `{"path":"//evil.example/echo"}`); err != nil {
		t.Fatal(err)
	}
	if h := a.seen()[before]; h.Path != "//evil.example/echo" {
		t.Errorf("the app saw path %q", h.Path)
	}
}

func TestBaseURLPathIsAPrefix(t *testing.T) {
	a := newApp(t)
	tools, err := script.Parse("t.star", `
def get():
    """Gets."""
    return request("GET", "/tickets/42").status
`, script.BaseURL(a.URL+"/api/"), script.Header("Authorization", token))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := tools[0].Call(context.Background(), `{}`); err != nil || out != "200" {
		t.Fatalf("= %q, %v", out, err)
	}
	if got := a.seen()[0].Path; got != "/api/tickets/42" {
		t.Errorf("path = %q", got)
	}
}

func TestQueryAndBody(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def search():
    """Searches.

    onion:intent read
    """
    return request("GET", "/echo", query={"q": "a b&c", "n": [1, 2], "all": True, "skip": None}).json()["query"]

def create(text):
    """Creates."""
    sent = request("POST", "/echo", json={"text": text, "n": 1}).json()
    raw = request("PUT", "/echo", body="plain " + text, headers={"X-Trace": "t1"}).json()
    return [sent["body"], sent["headers"]["Content-Type"][0], raw["body"], raw["headers"]["X-Trace"][0]]

def both():
    """Sends both."""
    request("POST", "/echo", json={}, body="x")
`)
	if got := mustCall(t, tools, "search", `{}`); got != "all=true&n=1&n=2&q=a+b%26c" {
		t.Errorf("query = %q", got)
	}
	want := `["{\"n\":1,\"text\":\"hi\"}","application/json","plain hi","t1"]`
	if got := mustCall(t, tools, "create", `{"text":"hi"}`); got != want {
		t.Errorf("create = %s, want %s", got, want)
	}
	if _, err := call(t, tools, "both", `{}`); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("json= and body= together: err = %v", err)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def follow():
    """Follows.

    onion:intent read
    """
    answer = request("GET", "/redirect")
    return {"status": answer.status, "location": answer.headers["Location"]}
`)
	if got := mustCall(t, tools, "follow", `{}`); got != `{"location":"/elsewhere","status":302}` {
		t.Errorf("= %s", got)
	}
	for _, h := range a.seen() {
		if h.Path == "/elsewhere" {
			t.Error("the redirect was followed")
		}
	}
}

func TestRequestLimit(t *testing.T) {
	a := newApp(t)
	src := `
def many(n):
    """Requests n times.

    n (integer): how many

    onion:intent read
    """
    for i in range(n):
        request("GET", "/echo")
    return n
`
	for _, tc := range []struct {
		opts  []script.Option
		limit int
	}{
		{nil, script.DefaultMaxRequests},
		{[]script.Option{script.MaxRequests(3)}, 3},
	} {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			tools := a.parse(t, src, tc.opts...)
			if _, err := call(t, tools, "many", fmt.Sprintf(`{"n":%d}`, tc.limit)); err != nil {
				t.Fatalf("%d requests: %v", tc.limit, err)
			}
			before := len(a.seen())
			_, err := call(t, tools, "many", fmt.Sprintf(`{"n":%d}`, tc.limit+1))
			want := fmt.Sprintf("a call may make at most %d requests (script.MaxRequests)", tc.limit)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("request %d: err = %v, want it to contain %q", tc.limit+1, err, want)
			}
			if n := len(a.seen()) - before; n != tc.limit {
				t.Errorf("the app got %d requests, want %d", n, tc.limit)
			}
		})
	}
}

func TestEndlessLoopStopped(t *testing.T) {
	tools, err := script.Parse("spin.star", `
def spin():
    """Spins."""
    for i in range(1000000000):
        pass
`)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = tools[0].Call(context.Background(), `{}`)
	if err == nil || !strings.Contains(err.Error(), "step limit of 1000000 was reached (script.MaxSteps)") {
		t.Fatalf("err = %v, want the step limit", err)
	}
	if !strings.Contains(err.Error(), "spin.star:4") {
		t.Errorf("err = %v, want the line of the loop", err)
	}
	t.Logf("stopped after %v: %v", time.Since(start), err)
}

func TestTimeoutEndsBlockingRequest(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def slow():
    """Waits.

    onion:intent read
    """
    return request("GET", "/slow").status
`, script.Timeout(100*time.Millisecond))
	start := time.Now()
	_, err := call(t, tools, "slow", `{}`)
	if err == nil || !strings.Contains(err.Error(), "took longer than 100ms (script.Timeout)") {
		t.Fatalf("err = %v, want the timeout", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want it to wrap context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the call took %v", d)
	}
}

func TestCredentialsStayInGo(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def peek():
    """Looks at what the app echoes.

    onion:intent read
    """
    answer = request("GET", "/echo")
    return [answer.headers["X-Echo-Auth"], answer.json()["headers"]["Authorization"][0], str(answer.headers)]

def forge():
    """Sets its own credentials.

    onion:intent read
    """
    return request("GET", "/echo", headers={"authorization": "Bearer mine"}).status

def host():
    """Sets Host.

    onion:intent read
    """
    return request("GET", "/echo", headers={"Host": "evil.example"}).status
`)
	out := mustCall(t, tools, "peek", `{}`)
	if strings.Contains(out, "s3cret") {
		t.Errorf("the script saw the credentials: %s", out)
	}
	if !strings.HasPrefix(out, `["[redacted]","[redacted]"`) {
		t.Errorf("peek = %s, want the echoed credentials redacted", out)
	}
	if h := a.seen()[0]; h.Auth != token {
		t.Errorf("the app got Authorization %q", h.Auth)
	}
	before := len(a.seen())
	if _, err := call(t, tools, "forge", `{}`); err == nil || !strings.Contains(err.Error(), "Authorization is set by the runtime and cannot be set by a script") {
		t.Errorf("forge: err = %v", err)
	}
	if _, err := call(t, tools, "host", `{}`); err == nil || !strings.Contains(err.Error(), "Host cannot be set by a script") {
		t.Errorf("host: err = %v", err)
	}
	if n := len(a.seen()) - before; n != 0 {
		t.Errorf("refused requests reached the app %d times", n)
	}
}

func TestResponseBodyCut(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, `
def big():
    """Gets a big body.

    onion:intent read
    """
    answer = request("GET", "/big")
    return {"truncated": answer.truncated, "body": answer.body}

def big_json():
    """Parses a big body.

    onion:intent read
    """
    return request("GET", "/big").json()
`, script.MaxResponseBytes(101))
	var got struct {
		Truncated bool
		Body      string
	}
	if err := jsonUnmarshal(mustCall(t, tools, "big", `{}`), &got); err != nil {
		t.Fatal(err)
	}
	// 101 bytes of two-byte characters: cut to 100, not mid-character.
	want := strings.Repeat("é", 50) + "\n[cut: the response body is longer than 101 bytes (script.MaxResponseBytes)]"
	if !got.Truncated || got.Body != want {
		t.Errorf("= %+v, want the body cut at 100 bytes with a marker", got)
	}
	if _, err := call(t, tools, "big_json", `{}`); err == nil || !strings.Contains(err.Error(), "was cut at script.MaxResponseBytes") {
		t.Errorf("json() of a cut body: err = %v", err)
	}
}

// panicTransport panics on every request, as a broken RoundTripper might.
type panicTransport struct{}

func (panicTransport) RoundTrip(*http.Request) (*http.Response, error) { panic("boom") }

func TestPanicInRuntimeIsAnError(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, ticketsStar, script.HTTPClient(&http.Client{Transport: panicTransport{}}))
	_, err := call(t, tools, "ticket_text", `{"ticket_id":"42"}`)
	if err == nil || !strings.Contains(err.Error(), "internal error: boom") {
		t.Errorf("err = %v, want the panic as an error", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	a := newApp(t)
	tools := a.parse(t, ticketsStar)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			out, err := tools["ticket_text"].Call(context.Background(), `{"ticket_id":"42"}`)
			if err == nil && !strings.Contains(out, "on fire") {
				err = fmt.Errorf("got %q", out)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestNoBaseURL(t *testing.T) {
	tools, err := script.Parse("t.star", ticketsStar)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools[0].Call(context.Background(), `{"ticket_id":"1"}`); err == nil || !strings.Contains(err.Error(), "script.BaseURL") {
		t.Errorf("err = %v", err)
	}
}
