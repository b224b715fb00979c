package script

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
)

// maxDepth bounds the nesting of values converted either way; Starlark
// lists may contain themselves.
const maxDepth = 64

// toGo converts a Starlark value to the Go value encoding/json would make of
// the same JSON: nil, bool, int64, float64, string, []any, map[string]any,
// with json.Number for integers beyond int64.
func toGo(v starlark.Value) (any, error) { return toGoDepth(v, 0) }

func toGoDepth(v starlark.Value, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("value nested deeper than %d levels (a list or dict that contains itself?)", maxDepth)
	}
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.Int:
		if i, ok := x.Int64(); ok {
			return i, nil
		}
		return json.Number(x.String()), nil
	case starlark.Float:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("cannot convert %v to JSON", x)
		}
		return f, nil
	case starlark.String:
		return string(x), nil
	case starlark.Bytes:
		return string(x), nil
	case *starlark.Dict:
		m := make(map[string]any, x.Len())
		for _, kv := range x.Items() {
			k, ok := kv[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("dict key %s is a %s; JSON object keys must be strings", kv[0], kv[0].Type())
			}
			e, err := toGoDepth(kv[1], depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%q]: %w", string(k), err)
			}
			m[string(k)] = e
		}
		return m, nil
	case *starlarkstruct.Struct:
		sd := starlark.StringDict{}
		x.ToStringDict(sd)
		m := make(map[string]any, len(sd))
		for k, e := range sd {
			g, err := toGoDepth(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf(".%s: %w", k, err)
			}
			m[k] = g
		}
		return m, nil
	case *response:
		return x.summary(), nil
	case *headerDict:
		return x.goMap(), nil
	case starlark.Iterable: // list, tuple, set
		out := []any{}
		it := x.Iterate()
		defer it.Done()
		var e starlark.Value
		for i := 0; it.Next(&e); i++ {
			g, err := toGoDepth(e, depth+1)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out = append(out, g)
		}
		return out, nil
	}
	return nil, fmt.Errorf("cannot convert a %s to JSON", v.Type())
}

// numberToStarlark makes an int of a JSON integer and a float of any other
// number.
func numberToStarlark(n json.Number) (starlark.Value, error) {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		i, ok := new(big.Int).SetString(s, 10)
		if ok {
			return starlark.MakeBigInt(i), nil
		}
	}
	f, err := n.Float64()
	if err != nil {
		return nil, fmt.Errorf("number %s: %w", s, err)
	}
	return starlark.Float(f), nil
}

// decodeJSON parses JSON text into a Starlark value. Object keys keep the
// order they have in the text, so a script sees what the application sent.
func decodeJSON(data []byte) (starlark.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("invalid JSON: more than one value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (starlark.Value, error) {
	if depth > 10_000 {
		return nil, fmt.Errorf("JSON nested too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			var l []starlark.Value
			for dec.More() {
				e, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, e)
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			return starlark.NewList(l), nil
		case '{':
			d := new(starlark.Dict)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, fmt.Errorf("invalid JSON: %w", err)
				}
				k, _ := kt.(string)
				e, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if err := d.SetKey(starlark.String(k), e); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, fmt.Errorf("invalid JSON: %w", err)
			}
			return d, nil
		}
		return nil, fmt.Errorf("invalid JSON: unexpected %v", t)
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(t), nil
	case string:
		return starlark.String(t), nil
	case json.Number:
		return numberToStarlark(t)
	}
	return nil, fmt.Errorf("invalid JSON: unexpected %T", tok)
}
