package onion

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// This file runs an object's plan: its fields read in any order, each
// once, the required ones checked, and every error placed at its field.

// decode reads an object into the struct v.
func (p *objectPlan) decode(r *argReader, v reflect.Value) error {
	if !r.open('{') {
		return r.typeErr("object")
	}
	var seenSmall uint64
	var seenBig []bool
	if len(p.fields) > 64 {
		seenBig = make([]bool, len(p.fields))
	}
	for {
		quoted, end, err := r.nextKey()
		if err != nil {
			return err
		}
		if end {
			break
		}
		// A name as it is in the arguments is its text unless it holds a
		// backslash, which no field's name does when it matches.
		key := quoted[1 : len(quoted)-1]
		i, ok := p.lookup(key)
		if (!ok || p.escapedNames) && bytes.IndexByte(key, '\\') >= 0 {
			key = unquote(quoted)
			i, ok = p.lookup(key)
		}
		if !ok {
			if p.allowUnknown {
				if _, err := r.raw(); err != nil {
					return err
				}
				continue
			}
			return &pathError{field: string(key), err: errUnknownField}
		}
		f := &p.fields[i]
		if seenBig != nil && seenBig[i] || seenBig == nil && seenSmall&(1<<i) != 0 {
			return &pathError{field: f.name, err: errTwice}
		}
		if seenBig != nil {
			seenBig[i] = true
		} else {
			seenSmall |= 1 << i
		}
		if !f.required && r.null() {
			if f.def.IsValid() {
				fieldByIndex(v, f.index).Set(f.def)
			}
			continue
		}
		if err := f.dec(r, fieldByIndex(v, f.index)); err != nil {
			return &pathError{field: f.name, err: err}
		}
	}
	for i := range p.fields {
		f := &p.fields[i]
		seen := seenBig != nil && seenBig[i] || seenBig == nil && seenSmall&(1<<i) != 0
		if seen {
			continue
		}
		if f.required {
			return &pathError{field: f.name, err: errMissing}
		}
		if f.def.IsValid() {
			fieldByIndex(v, f.index).Set(f.def)
		}
	}
	return nil
}

func (p *objectPlan) lookup(key []byte) (int, bool) {
	if len(p.fields) <= 8 {
		for i := range p.fields {
			if p.fields[i].name == string(key) {
				return i, true
			}
		}
		return 0, false
	}
	i, ok := p.byName[string(key)]
	return i, ok
}

// fieldByIndex is v.FieldByIndex, allocating nil embedded pointers.
func fieldByIndex(v reflect.Value, index []int) reflect.Value {
	if len(index) == 1 {
		return v.Field(index[0])
	}
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v
}

var (
	errUnknownField = errors.New("unknown field")
	errMissing      = errors.New("required field is missing")
	errTwice        = errors.New("field given twice")
)

// pathError places an error at a field or array index.
type pathError struct {
	field string
	index int
	err   error
}

func (e *pathError) Error() string {
	var parts []string
	var err error = e
	for {
		pe, ok := err.(*pathError)
		if !ok {
			break
		}
		if pe.field != "" {
			parts = append(parts, "."+pe.field)
		} else {
			parts = append(parts, "["+strconv.Itoa(pe.index)+"]")
		}
		err = pe.err
	}
	path := strings.TrimPrefix(strings.Join(parts, ""), ".")
	return path + ": " + err.Error()
}

func (e *pathError) Unwrap() error { return e.err }

// decodeFallback hands one value to encoding/json: arrays, any, maps with
// keys of their own, and types with their own UnmarshalJSON. Its depth and numbers are bounded
// first.
func decodeFallback(r *argReader, v reflect.Value) error {
	raw, err := r.raw()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("expected %s, got %s", te.Type, te.Value)
		}
		return err
	}
	return nil
}
