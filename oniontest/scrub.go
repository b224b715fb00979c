package oniontest

import (
	"bytes"
	"encoding/json"
	"hash/maphash"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/onionkit/onion/internal/redact"
)

// requestSecrets are the credentials r carries, and those of upstream's
// query when it is not nil: the values of every header and query
// parameter whose name says it holds one (redact.CredentialName), with
// what they hold (a bearer token, a Basic password, each cookie).
func requestSecrets(r *http.Request, upstream *url.URL) []string {
	var keys []string
	for name, values := range r.Header {
		if redact.CredentialName(name) {
			for _, v := range values {
				keys = append(keys, redact.Credentials(name, v)...)
			}
		}
	}
	for _, u := range []*url.URL{r.URL, upstream} {
		if u == nil {
			continue
		}
		q, _ := url.ParseQuery(u.RawQuery) // the parameters that parse
		for name, values := range q {
			if redact.CredentialName(name) {
				keys = append(keys, values...)
			}
		}
	}
	return keys
}

// redactQuery is the raw query q with the value of every parameter whose
// name says it holds a credential replaced by redact.Mark, the rest byte
// for byte. The recorder and the player both write a query this way, so
// that a recording with a key in its query plays back.
func redactQuery(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	changed := false
	for i, p := range parts {
		name, _, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if redact.CredentialName(name) {
			parts[i] = p[:strings.IndexByte(p, '=')+1] + redact.Mark
			changed = true
		}
	}
	if !changed {
		return q
	}
	return strings.Join(parts, "&")
}

// scrubRequest is rr with every secret red finds replaced: in its path,
// query and body. A JSON body that is no longer JSON once scrubbed (a
// secret cut an escape in two) is kept as text.
func scrubRequest(rr recordedRequest, red *redact.Redactor) recordedRequest {
	if red.Empty() {
		return rr
	}
	rr.Path = red.String(rr.Path)
	rr.Query = red.String(rr.Query)
	rr.Body = red.String(rr.Body)
	if rr.JSON != nil {
		if s := red.String(string(rr.JSON)); s != string(rr.JSON) {
			if json.Valid([]byte(s)) {
				rr.JSON = json.RawMessage(s)
			} else {
				rr.JSON, rr.Body = nil, s
			}
		}
	}
	return rr
}

// scrubResponse is rr with every secret red finds replaced: in its
// header values and its body. A stream is scrubbed whole, not event by
// event, and through the text its events spread over several
// (scrubStream), so that a secret sent in pieces is found.
func scrubResponse(rr recordedResponse, red *redact.Redactor) recordedResponse {
	if red.Empty() {
		return rr
	}
	if rr.Header != nil {
		h := make(map[string]string, len(rr.Header))
		for k, v := range rr.Header {
			h[k] = red.String(v)
		}
		rr.Header = h
	}
	if len(rr.Events) > 0 {
		joined := strings.Join(rr.Events, "")
		if body := red.String(scrubStream(joined, red)); body != joined {
			rr.Events = nil
			for _, e := range splitEvents([]byte(body)) {
				rr.Events = append(rr.Events, string(e))
			}
		}
	}
	rr.Body = red.String(rr.Body)
	if len(rr.BodyBase64) > 0 {
		rr.BodyBase64 = []byte(red.String(string(rr.BodyBase64)))
	}
	return rr
}

// maxLeafDepth bounds the nesting followed in an event's JSON data: the
// texts a stream spreads over its events lie a few levels down.
const maxLeafDepth = 32

// A leaf is a string value in the JSON data of a stream's events: its
// token is body[start:end].
type leaf struct {
	start, end int
	value      string
}

// A piece is value[start:end] of a leaf, part of a secret, to be
// replaced by redact.Mark when mark is set and by nothing when not.
type piece struct {
	start, end int
	mark       bool
}

// scrubStream finds the secrets an event stream spreads over its events,
// as a model's reply or a tool call's arguments come a few characters an
// event: the string values of the events' JSON data at the same place in
// the document ("choices.0.delta.content", "delta") are joined, in the
// order of the events, and searched as one text. Each part of a secret
// found is replaced in its event, the first part by redact.Mark and the
// others by nothing; the rest of body is kept byte for byte.
func scrubStream(body string, red *redact.Redactor) string {
	var leaves []leaf
	var groups [][]int         // indices into leaves, by path, in the order first seen
	pathID := map[uint64]int{} // indices into groups, by the hash of the path
	seed := maphash.MakeSeed()
	for off := 0; off < len(body); {
		line := body[off:]
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		if data, ok := strings.CutPrefix(line, "data:"); ok {
			base := off + len("data:")
			if strings.HasPrefix(data, " ") {
				data, base = data[1:], base+1
			}
			jsonLeaves(seed, strings.TrimSuffix(data, "\r"), func(path uint64, start, end int, value string) {
				id, ok := pathID[path]
				if !ok {
					id = len(groups)
					pathID[path] = id
					groups = append(groups, nil)
				}
				groups[id] = append(groups[id], len(leaves))
				leaves = append(leaves, leaf{base + start, base + end, value})
			})
		}
		off += len(line) + 1
	}
	pieces := map[int][]piece{}
	for _, idx := range groups {
		if len(idx) < 2 {
			continue // one value is searched with the body
		}
		var joined strings.Builder
		starts := make([]int, len(idx)) // where each value begins in joined
		size := 0
		for _, li := range idx {
			size += len(leaves[li].value)
		}
		joined.Grow(size)
		for j, li := range idx {
			starts[j] = joined.Len()
			joined.WriteString(leaves[li].value)
		}
		for _, sp := range red.Spans(joined.String()) {
			j, found := slices.BinarySearch(starts, sp.Start)
			if !found {
				j--
			}
			for first := true; j < len(idx) && starts[j] < sp.End; j++ {
				v := leaves[idx[j]].value
				from, to := max(sp.Start-starts[j], 0), min(sp.End-starts[j], len(v))
				if from >= to {
					continue // an empty value
				}
				pieces[idx[j]] = append(pieces[idx[j]], piece{from, to, first})
				first = false
			}
		}
	}
	if len(pieces) == 0 {
		return body
	}
	var b strings.Builder
	b.Grow(len(body))
	at := 0
	for li, l := range leaves { // in the order of body
		ps, ok := pieces[li]
		if !ok {
			continue
		}
		b.WriteString(body[at:l.start])
		b.Write(quote(cutPieces(l.value, ps)))
		at = l.end
	}
	b.WriteString(body[at:])
	return b.String()
}

// cutPieces is v with each of ps (sorted, apart) replaced.
func cutPieces(v string, ps []piece) string {
	var b strings.Builder
	at := 0
	for _, p := range ps {
		b.WriteString(v[at:p.start])
		if p.mark {
			b.WriteString(redact.Mark)
		}
		at = p.end
	}
	b.WriteString(v[at:])
	return b.String()
}

// quote is s as a JSON string.
func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// jsonLeaves calls fn with each string value of the JSON text data (not
// the keys), a hash of its path (the keys, as written, and the indices;
// the same in every call with the same seed) and where its token lies in
// data. It reads data in one pass, each key hashed once, without checking
// it is JSON, up to the first string that does not end or maxLeafDepth
// levels down.
func jsonLeaves(seed maphash.Seed, data string, fn func(path uint64, start, end int, value string)) {
	if !strings.HasPrefix(data, "{") && !strings.HasPrefix(data, "[") {
		return
	}
	type frame struct {
		object  bool
		wantKey bool   // in an object: the next string is a key
		path    uint64 // the hash of the path to this object or array
		seg     uint64 // the hash of the key, or the index, of the value to come
	}
	stack := make([]frame, 0, maxLeafDepth)
	// path is the hash of the path to the value to come.
	path := func() uint64 {
		if len(stack) == 0 {
			return 0
		}
		f := stack[len(stack)-1]
		return mix(f.path, f.seg)
	}
	// next moves the innermost frame past a value.
	next := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].seg++
			}
		}
	}
	for i := 0; i < len(data); {
		switch c := data[i]; c {
		case '{', '[':
			if len(stack) == maxLeafDepth {
				return
			}
			stack = append(stack, frame{object: c == '{', wantKey: c == '{', path: path()})
			i++
		case '}', ']':
			if len(stack) == 0 {
				return
			}
			stack = stack[:len(stack)-1]
			next()
			i++
		case '"':
			end := stringEnd(data, i)
			if end < 0 {
				return
			}
			tok := data[i:end]
			i = end
			if n := len(stack); n > 0 && stack[n-1].wantKey {
				stack[n-1].seg, stack[n-1].wantKey = maphash.String(seed, tok), false
				continue
			}
			if value, ok := unquote(tok); ok {
				fn(path(), end-len(tok), end, value)
			}
			next()
		case ',', ':', ' ', '\t', '\r', '\n':
			i++
		default: // a number, true, false or null
			for i < len(data) && !strings.ContainsRune(",:]}\" \t\r\n", rune(data[i])) {
				i++
			}
			next()
		}
	}
}

// mix is the hash of a path to a container, of hash h, followed by the
// key or index of hash seg.
func mix(h, seg uint64) uint64 {
	h = (h ^ seg) * 0x9e3779b97f4a7c15
	return h ^ h>>31
}

// stringEnd returns the index after the quote that ends the JSON string
// starting at data[i], or -1 if none does.
func stringEnd(data string, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// unquote is the value of the JSON string tok.
func unquote(tok string) (string, bool) {
	if !strings.Contains(tok, `\`) {
		return tok[1 : len(tok)-1], true
	}
	var s string
	err := json.Unmarshal([]byte(tok), &s)
	return s, err == nil
}
