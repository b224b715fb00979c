package oniontest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/onionkit/onion/internal/redact"
)

// FuzzRequestDiff: whatever the bodies and the volatile path, comparing
// never panics, a request never differs from itself, the diff is bounded,
// and two requests differ exactly when the diff is not empty (the sides
// swapped).
func FuzzRequestDiff(f *testing.F) {
	f.Add(`{"model":"m","messages":[{"role":"user","content":"a"}]}`, `{"model":"m","messages":[{"role":"user","content":"b"}]}`, "messages.*.content")
	f.Add(`{"a":{"b":[1,2,{"c":3}]}}`, `{"a":{"b":[1,2]}}`, "a.b.2")
	f.Add(`[1,"x",null]`, `{"x":1}`, "*")
	f.Add(`{"n":1.0}`, `{"n":1}`, "")
	f.Add(`not json`, `{"x":"`+strings.Repeat("é", 200)+`"}`, "x")
	f.Add(`{"s":"`+strings.Repeat("a", 300)+`b"}`, `{"s":"`+strings.Repeat("a", 300)+`c"}`, "t")
	f.Fuzz(func(t *testing.T, a, b, volatile string) {
		ra := requestOf([]byte(a))
		rb := requestOf([]byte(b))
		vol := []string{volatile}
		if d := requestDiff(ra, requestOf([]byte(a)), vol); d != "" {
			t.Fatalf("a request differs from itself:\n%s", d)
		}
		d, back := requestDiff(ra, rb, vol), requestDiff(rb, ra, vol)
		if (d == "") != (back == "") {
			t.Fatalf("a against b: %q; b against a: %q", d, back)
		}
		if n := strings.Count(d, "\n"); n > 3*maxDifferences+2 {
			t.Fatalf("%d lines of diff", n)
		}
	})
}

func requestOf(body []byte) recordedRequest {
	return newRecordedRequest(httptest.NewRequest("POST", "/v1/chat/completions", nil), body)
}

// FuzzParseRecording: a file of any content is a recording or an error,
// never a panic; a recording's replies can be built, and it survives being
// written and read again.
func FuzzParseRecording(f *testing.F) {
	f.Add([]byte(`{"format":"oniontest/recording/1","volatile":["user"],"exchanges":[{"request":{"method":"POST","path":"/v1/chat/completions","json":{"model":"m"}},"response":{"status":200,"header":{"Content-Type":"text/event-stream"},"events":["data: {}\n\n","data: [DONE]\n\n"]}}]}`))
	f.Add([]byte(`{"format":"oniontest/recording/1","exchanges":[{"request":{"method":"GET","path":"/v1/models","body":"x"},"response":{"status":404,"body_base64":"//4A"}}]}`))
	f.Add([]byte(`{"format":"oniontest/recording/1","exchanges":[{"request":{"method":"POST","path":"/"},"response":{"status":200,"body":"a","events":["b"]}}]}`))
	f.Add([]byte(`{"format":"other"}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := parseRecording(b)
		if err != nil {
			return
		}
		for _, ex := range rec.Exchanges {
			ex.Response.reply()
		}
		out, err := rec.encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseRecording(out)
		if err != nil {
			t.Fatalf("written and read again: %v\n%s", err, out)
		}
		if len(again.Exchanges) != len(rec.Exchanges) {
			t.Fatalf("%d exchanges, then %d", len(rec.Exchanges), len(again.Exchanges))
		}
		for i := range rec.Exchanges {
			if !reflect.DeepEqual(again.Exchanges[i].Response.reply(), rec.Exchanges[i].Response.reply()) {
				t.Fatalf("exchange %d's reply changed on the way", i+1)
			}
		}
	})
}

// FuzzScrubStream: whatever the secret and the stream, scrubbing a
// recorded stream never panics, the recording is still one once written,
// and the secret, when it is one, is not left in the file as it is.
func FuzzScrubStream(f *testing.F) {
	const key = "sk-proj-Zq3xV9mT2bLw8RfK4nYp6HcJ1dGs5AeU"
	chunks := func(parts ...string) string {
		var b strings.Builder
		for _, p := range parts {
			d, _ := json.Marshal(p)
			b.WriteString(`data: {"choices":[{"index":0,"delta":{"content":` + string(d) + "}}]}\n\n")
		}
		return b.String() + "data: [DONE]\n\n"
	}
	b64 := base64.StdEncoding.EncodeToString([]byte(key))
	f.Add(key, chunks("Your key is ", key[:20], key[20:], "."))
	f.Add(key, chunks(key[:4], key[4:8], key[8:12], key[12:16], key[16:24], key[24:32], key[32:]))
	f.Add(key, chunks(strings.ToUpper(key[:10]), strings.ToUpper(key[10:25]), strings.ToUpper(key[25:])))
	f.Add(key, chunks(b64[:30], b64[30:]))
	f.Add(key, chunks(`\u0073k-proj-`, key[8:]))
	f.Add(key, "event: x\r\ndata: {\"a\":[\"sk-proj-Zq3x\",{\"b\":\"V9mT\"}]}\r\n\r\ndata: {\"a\":[\"2bLw8RfK4nYp6HcJ1dGs5AeU\"]}\n\n")
	f.Add("abcdefgh", "data: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"abcd\"\n\ndata: \"efgh\"\n\n")
	f.Fuzz(func(t *testing.T, secret, stream string) {
		rec := recording{Format: recordingFormat, Exchanges: []exchange{{
			Request:  recordedRequest{Method: "POST", Path: "/v1/chat/completions"},
			Response: newRecordedResponse(200, http.Header{"Content-Type": {"text/event-stream"}}, []byte(stream)),
		}}}
		out, err := rec.encode([]string{secret})
		if err != nil {
			t.Fatal(err)
		}
		again, err := parseRecording(out)
		if err != nil {
			t.Fatalf("written and read again: %v\n%s", err, out)
		}
		again.Exchanges[0].Response.reply()
		lower := func(s string) string { // ASCII only, as the scrub is
			b := []byte(s)
			for i, c := range b {
				if c >= 'A' && c <= 'Z' {
					b[i] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
		if len(secret) < redact.MinSecret || strings.ContainsAny(secret, "[]\"\\") || strings.Contains(redact.Mark, lower(secret)) {
			return // no secret, or one the mark or the file's quoting could spell
		}
		for _, e := range again.Exchanges[0].Response.Events {
			if strings.Contains(lower(e), lower(secret)) {
				t.Fatalf("%q is left in %q", secret, e)
			}
		}
	})
}
