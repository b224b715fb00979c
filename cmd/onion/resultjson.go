package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/onionkit/onion"
)

// resultJSON is res as -json prints it: the Result's own JSON, indented,
// with every duration (a "duration" or "…_wait" field, integer
// nanoseconds in the Result's JSON) written as Go writes durations, such
// as "2.06s", which a person can read and time.ParseDuration reads back.
func resultJSON(res *onion.Result) ([]byte, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return json.MarshalIndent(readableDurations(v, ""), "", "  ")
}

// readableDurations rewrites the durations in v, found under key.
func readableDurations(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = readableDurations(e, k)
		}
	case []any:
		for i, e := range v {
			v[i] = readableDurations(e, key)
		}
	case json.Number:
		if key == "duration" || strings.HasSuffix(key, "_wait") {
			if n, err := v.Int64(); err == nil {
				return time.Duration(n).String()
			}
		}
	}
	return v
}
