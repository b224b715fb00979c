package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/onionkit/onion/internal/gosource"
)

// A func's Call (srcdoc.Func.Call) lets onion call it without reflection:
// the generated code asserts the func's type, and runs it with the
// arguments onion decoded into a struct. It is written for the exported
// funcs and methods that have a tool's shape — an optional
// context.Context first, then one struct or positional parameters, and
// (), (T), (error) or (T, error) out — whose types the generated file can
// name. onion checks that the struct is laid out as it expects before
// using a Call, and calls by reflection when there is none.

// callNames are the names the generated code declares inside a Call: a
// func whose types use one of them gets no Call, rather than code that
// would not compile.
var callNames = map[string]bool{"fn": true, "f": true, "ok": true, "ctx": true, "a": true, "r": true, "err": true}

// notTools are the methods of well-known interfaces, by name and type,
// which are not tools (onion.ToolsFrom leaves out Close and String).
var notTools = map[string]string{
	"Close":     "func() error",
	"String":    "func() string",
	"Error":     "func() string",
	"Unwrap":    "func() error",
	"Read":      "func([]byte) (int, error)",
	"Write":     "func([]byte) (int, error)",
	"ServeHTTP": "func(http.ResponseWriter, *http.Request)",
}

// callGen writes the Calls of one package.
type callGen struct {
	fset    *token.FileSet
	structs map[string]bool // the package's struct types
	decls   map[string]bool // the package's own top-level names
	// imports are the generated file's imports: local name → path.
	imports map[string]string
}

// genCalls returns the source of the Call of each func of the package in
// dir that gets one, by its srcdoc name, and the import specs that source
// needs.
func genCalls(dir, pkgName string) (map[string]string, []string, error) {
	files, fset, err := gosource.ParseFiles(dir, pkgName)
	if err != nil {
		return nil, nil, err
	}
	g := &callGen{fset: fset, structs: map[string]bool{}, decls: map[string]bool{}, imports: map[string]string{}}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					g.decls[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						g.decls[s.Name.Name] = true
						if _, ok := s.Type.(*ast.StructType); ok && s.TypeParams == nil && s.Assign == 0 {
							g.structs[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							g.decls[n.Name] = true
						}
					}
				}
			}
		}
	}
	if g.decls["context"] || g.decls["srcdoc"] {
		return nil, nil, nil // the generated file could not import them
	}
	names, err := packageNames(dir, files)
	if err != nil {
		return nil, nil, err
	}
	g.imports["context"] = "context"
	g.imports["srcdoc"] = "github.com/onionkit/onion/srcdoc"
	calls := map[string]string{}
	for _, f := range files {
		local, ok := fileImports(f, names)
		if !ok {
			continue // a dot import: an unqualified type may be another package's
		}
		for _, d := range f.Decls {
			if d, ok := d.(*ast.FuncDecl); ok {
				if name, src, ok := g.call(d, local); ok {
					calls[name] = src
				}
			}
		}
	}
	if len(calls) == 0 {
		return nil, nil, nil
	}
	names["context"] = "context"
	names["github.com/onionkit/onion/srcdoc"] = "srcdoc"
	var specs []string
	for name, path := range g.imports {
		if names[path] == name {
			specs = append(specs, strconv.Quote(path))
		} else {
			specs = append(specs, name+" "+strconv.Quote(path))
		}
	}
	// The standard library first, then the rest, as goimports groups them.
	sort.Slice(specs, func(i, j int) bool {
		a, b := unaliased(specs[i]), unaliased(specs[j])
		if std(a) != std(b) {
			return std(a)
		}
		return a < b
	})
	for i := 1; i < len(specs); i++ {
		if std(unaliased(specs[i-1])) && !std(unaliased(specs[i])) {
			specs = slices.Insert(specs, i, "")
			break
		}
	}
	return calls, specs, nil
}

// std reports whether a quoted import path is the standard library's.
func std(quoted string) bool {
	first, _, _ := strings.Cut(quoted, "/")
	return !strings.Contains(first, ".")
}

// unaliased is an import spec's path, for sorting.
func unaliased(spec string) string { return spec[strings.IndexByte(spec, '"'):] }

// packageNames returns the package name of each import path the files
// import without naming it, as the go command reports it.
func packageNames(dir string, files []*ast.File) (map[string]string, error) {
	seen := map[string]bool{}
	var paths []string
	for _, f := range files {
		for _, s := range f.Imports {
			path, err := strconv.Unquote(s.Path.Value)
			if err != nil || s.Name != nil || seen[path] || path == "C" {
				continue
			}
			seen[path] = true
			paths = append(paths, path)
		}
	}
	names := map[string]string{}
	if len(paths) == 0 {
		return names, nil
	}
	sort.Strings(paths)
	cmd := exec.Command("go", append([]string{"list", "-e", "-f", "{{.ImportPath}}\t{{.Name}}"}, paths...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list the imports in %s: %w: %s", dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	for line := range strings.Lines(string(out)) {
		path, name, _ := strings.Cut(strings.TrimSpace(line), "\t")
		if name != "" {
			names[path] = name
		}
	}
	return names, nil
}

// fileImports maps the local names of f's imports to their paths; ok is
// false when f has a dot import.
func fileImports(f *ast.File, names map[string]string) (map[string]string, bool) {
	local := map[string]string{}
	for _, s := range f.Imports {
		path, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			continue
		}
		name := names[path]
		if s.Name != nil {
			name = s.Name.Name
		}
		switch name {
		case ".":
			return nil, false
		case "", "_":
			continue
		}
		local[name] = path
	}
	return local, true
}

// call returns the srcdoc name of d and the source of its Call, when it
// gets one.
func (g *callGen) call(d *ast.FuncDecl, local map[string]string) (name, src string, ok bool) {
	if !d.Name.IsExported() || d.Type.TypeParams != nil {
		return "", "", false
	}
	name = d.Name.Name
	recv := ""
	if d.Recv != nil {
		if len(d.Recv.List) != 1 {
			return "", "", false
		}
		t := d.Recv.List[0].Type
		if star, ok := t.(*ast.StarExpr); ok {
			t = star.X
		}
		id, ok := t.(*ast.Ident)
		if !ok { // a generic receiver
			return "", "", false
		}
		recv = id.Name
		name = recv + "." + name
	}
	// The parameters, one type each.
	var params []ast.Expr
	for _, f := range d.Type.Params.List {
		n := max(len(f.Names), 1)
		for range n {
			params = append(params, f.Type)
		}
	}
	var results []ast.Expr
	if d.Type.Results != nil {
		for _, f := range d.Type.Results.List {
			for range max(len(f.Names), 1) {
				results = append(results, f.Type)
			}
		}
	}
	// Every type must be nameable here, and none may be a context.Context
	// but the first parameter.
	used := map[string]string{}
	for _, e := range append(append([]ast.Expr(nil), params...), results...) {
		if !g.nameable(e, local, used) {
			return "", "", false
		}
	}
	hasCtx := len(params) > 0 && isContext(params[0], local)
	in := params
	if hasCtx {
		in = params[1:]
	}
	for _, p := range in {
		if isContext(p, local) {
			return "", "", false
		}
		if _, ok := p.(*ast.Ellipsis); ok {
			return "", "", false
		}
	}
	isErr := func(e ast.Expr) bool { id, ok := e.(*ast.Ident); return ok && id.Name == "error" }
	var value, withErr bool
	switch len(results) {
	case 0:
	case 1:
		withErr = isErr(results[0])
		value = !withErr
	case 2:
		if !isErr(results[1]) {
			return "", "", false
		}
		value, withErr = true, true
	default:
		return "", "", false
	}

	// The struct the arguments are decoded into, and the call's arguments.
	var argsType string
	var args []string
	if hasCtx {
		args = append(args, "ctx")
	}
	if len(in) == 1 && g.structArg(in[0]) {
		if star, ok := in[0].(*ast.StarExpr); ok {
			argsType = g.text(star.X)
			args = append(args, "a")
		} else {
			argsType = g.text(in[0])
			args = append(args, "*a")
		}
	} else {
		var fields []string
		for i, p := range in {
			fields = append(fields, fmt.Sprintf("P%d %s", i, g.text(p)))
			args = append(args, fmt.Sprintf("a.P%d", i))
		}
		argsType = "struct{}"
		if len(fields) > 0 {
			argsType = "struct {\n" + strings.Join(fields, "\n") + "\n}"
		}
	}
	call := "(" + strings.Join(args, ", ") + ")"
	body := func(callee string) string {
		c := callee + call
		var b strings.Builder
		fmt.Fprintf(&b, "return srcdoc.NewCall(func(ctx context.Context, a *%s) (any, error) {\n", argsType)
		switch {
		case value && withErr:
			fmt.Fprintf(&b, "r, err := %s\nif err != nil {\nreturn nil, err\n}\nreturn r, nil\n", c)
		case withErr:
			fmt.Fprintf(&b, "return nil, %s\n", c)
		case value:
			fmt.Fprintf(&b, "return %s, nil\n", c)
		default:
			fmt.Fprintf(&b, "%s\nreturn nil, nil\n", c)
		}
		b.WriteString("})\n")
		return b.String()
	}
	var ptypes, rtypes []string
	for _, p := range params {
		ptypes = append(ptypes, g.text(p))
	}
	for _, r := range results {
		rtypes = append(rtypes, g.text(r))
	}
	ft := "func(" + strings.Join(ptypes, ", ") + ")"
	switch len(rtypes) {
	case 0:
	case 1:
		ft += " " + rtypes[0]
	default:
		ft += " (" + strings.Join(rtypes, ", ") + ")"
	}
	if recv != "" && notTools[d.Name.Name] == ft {
		return "", "", false
	}
	for n, path := range used {
		if p, ok := g.imports[n]; ok && p != path || g.decls[n] {
			return "", "", false // the generated file cannot name both
		}
	}
	for n, path := range used {
		g.imports[n] = path
	}
	var b strings.Builder
	b.WriteString("func(fn any) *srcdoc.Call {\n")
	if recv != "" {
		fmt.Fprintf(&b, "switch f := fn.(type) {\ncase *%s:\n%scase %s:\n%s}\n", recv, body("f."+d.Name.Name), ft, body("f"))
	} else {
		fmt.Fprintf(&b, "if f, ok := fn.(%s); ok {\n%s}\n", ft, body("f"))
	}
	b.WriteString("return nil\n}")
	return name, b.String(), true
}

// structArg reports whether the parameter of type e, alone, is the
// struct whose fields are the parameters: one of the package's struct
// types, a struct literal type, or a pointer to either. onion checks the
// guess: a struct type of another package, say, is decoded as the one
// field of a struct, which it lays out the same.
func (g *callGen) structArg(e ast.Expr) bool {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	switch e := e.(type) {
	case *ast.Ident:
		return g.structs[e.Name]
	case *ast.StructType:
		return true
	}
	return false
}

// nameable reports whether the type e can be written in the generated
// file, and adds the imports it needs to used.
func (g *callGen) nameable(e ast.Expr, local, used map[string]string) bool {
	ok := true
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			id, isID := n.X.(*ast.Ident)
			path, known := "", false
			if isID {
				path, known = local[id.Name]
			}
			if !known {
				ok = false
				return false
			}
			used[id.Name] = path
			return false
		case *ast.Ident:
			if callNames[n.Name] {
				ok = false
			}
		case *ast.FuncType, *ast.InterfaceType:
			// A func or interface type names its parameters and methods,
			// which the text keeps as they are.
		case *ast.IndexExpr, *ast.IndexListExpr:
			// A generic type's instance: its arguments are types too.
		}
		return ok
	})
	return ok
}

// isContext reports whether e is context.Context.
func isContext(e ast.Expr, local map[string]string) bool {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Context" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && local[id.Name] == "context"
}

// text is the source of the type e.
func (g *callGen) text(e ast.Expr) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, g.fset, e); err != nil {
		panic(err) // printing a parsed expression does not fail
	}
	return b.String()
}
