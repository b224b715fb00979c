package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"reflect"
	"strconv"
)

// check compares the output file out of the package in dir with what the
// source gives now. It returns one line per difference — "changed: func
// TodoList.Add", "added: type Priority", "removed: func Old" — and none
// when the file is up to date. The facts are compared, not the bytes, so
// that a file written by another version of oniondoc is not stale for its
// formatting alone.
func check(dir, out string) ([]string, error) {
	fresh, err := facts(dir)
	if err != nil {
		return nil, err
	}
	want, err := entries(fresh)
	if err != nil {
		return nil, fmt.Errorf("read the facts just rendered: %w", err)
	}
	path := outPath(dir, out)
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return []string{"missing: " + path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read facts: %w", err)
	}
	got, err := entries(old)
	if err != nil {
		return []string{fmt.Sprintf("unreadable: %s (%v)", path, err)}, nil
	}
	var diffs []string
	for _, e := range want.order {
		prev, ok := got.byKey[e]
		switch {
		case !ok:
			diffs = append(diffs, "added: "+e)
		case !reflect.DeepEqual(prev, want.byKey[e]):
			diffs = append(diffs, "changed: "+e)
		}
	}
	for _, e := range got.order {
		if _, ok := want.byKey[e]; !ok {
			diffs = append(diffs, "removed: "+e)
		}
	}
	return diffs, nil
}

// factEntries are the facts a generated file registers: "func Name" and
// "type Name" (and "path") to the literal's value, decoded.
type factEntries struct {
	order []string
	byKey map[string]any
}

// entries reads the facts registered by a file render wrote.
func entries(src []byte) (factEntries, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return factEntries{}, err
	}
	e := factEntries{byKey: map[string]any{}}
	add := func(key string, v any) {
		if _, dup := e.byKey[key]; !dup {
			e.order = append(e.order, key)
		}
		e.byKey[key] = v
	}
	var bad error
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok || bad != nil {
			return bad == nil
		}
		key, _ := kv.Key.(*ast.Ident)
		if key == nil {
			return true
		}
		kind := map[string]string{"Funcs": "func ", "Types": "type "}[key.Name]
		if key.Name == "Path" {
			v, err := literal(fset, kv.Value)
			if err != nil {
				bad = err
			}
			add("path", v)
			return false
		}
		list, ok := kv.Value.(*ast.CompositeLit)
		if kind == "" || !ok {
			return true
		}
		for _, elt := range list.Elts {
			v, err := literal(fset, elt)
			if err != nil {
				bad = err
				return false
			}
			fields, _ := v.(map[string]any)
			name, _ := fields["Name"].(string)
			add(kind+name, v)
		}
		return false
	})
	return e, bad
}

// literal decodes the literals render writes: strings, composite
// literals with keys (to a map) or without (to a slice), and a Call's
// func literal (to its source, formatted).
func literal(fset *token.FileSet, e ast.Expr) (any, error) {
	switch e := e.(type) {
	case *ast.FuncLit:
		var b bytes.Buffer
		if err := format.Node(&b, fset, e); err != nil {
			return nil, err
		}
		return b.String(), nil
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			return strconv.Unquote(e.Value)
		}
	case *ast.CompositeLit:
		if len(e.Elts) == 0 {
			return nil, nil
		}
		if _, keyed := e.Elts[0].(*ast.KeyValueExpr); keyed {
			m := map[string]any{}
			for _, elt := range e.Elts {
				kv, ok := elt.(*ast.KeyValueExpr)
				key, _ := kv.Key.(*ast.Ident)
				if !ok || key == nil {
					return nil, fmt.Errorf("unexpected %T in a literal", elt)
				}
				v, err := literal(fset, kv.Value)
				if err != nil {
					return nil, err
				}
				m[key.Name] = v
			}
			return m, nil
		}
		var s []any
		for _, elt := range e.Elts {
			v, err := literal(fset, elt)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	}
	return nil, fmt.Errorf("unexpected %T in a literal", e)
}
