// Package docspan holds the Go that documentation names in inline code to
// the code: a span such as `onion.CallInfo(ctx)` in a README must name
// something that exists, and a chain such as `onion.CallInfo(ctx).Key`
// must select what the type it reaches has. Arguments are not checked,
// since prose writes them as placeholders (`..`, `…`, `opts...`); names,
// fields, methods, result counts and composite-literal keys are.
//
// The packages are loaded from the compiler's export data (go list
// -export), so a check costs what building the packages costs, once.
package docspan

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// Span is one inline code span of a document.
type Span struct {
	Text string // the code, without its backticks
	Line int    // where it is, from 1
}

// spanRE finds inline code spans that start with a qualified name.
var spanRE = regexp.MustCompile("`([a-z][a-z0-9]*\\.[A-Z][^`\n]*)`")

// fenceRE finds fenced blocks, whose text is not inline code.
var fenceRE = regexp.MustCompile("(?ms)^```.*?^```")

// Spans returns the inline code spans of a Markdown document that start
// with one of the package names in pkgs (a name such as "onion" for
// `onion.NewAgent(…)`), outside fenced blocks.
func Spans(doc []byte, pkgs map[string]string) []Span {
	doc = fenceRE.ReplaceAllFunc(doc, func(b []byte) []byte {
		return bytes.Map(func(r rune) rune {
			if r == '\n' {
				return r
			}
			return ' '
		}, b)
	})
	var out []Span
	for _, m := range spanRE.FindAllSubmatchIndex(doc, -1) {
		text := string(doc[m[2]:m[3]])
		name, _, _ := strings.Cut(text, ".")
		if _, ok := pkgs[name]; !ok {
			continue
		}
		out = append(out, Span{Text: text, Line: 1 + bytes.Count(doc[:m[0]], []byte("\n"))})
	}
	return out
}

// A Checker checks spans against packages loaded once.
type Checker struct {
	pkgs map[string]*types.Package // by the name spans use
}

// Load loads the packages named in pkgs (name → import path) as the go
// command builds them in dir.
func Load(dir string, pkgs map[string]string) (*Checker, error) {
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}
	for _, path := range pkgs {
		args = append(args, path)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export in %s: %v: %s", dir, err, stderr.Bytes())
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			exports[path] = file
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	})
	c := &Checker{pkgs: map[string]*types.Package{}}
	for name, path := range pkgs {
		p, err := imp.Import(path)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", path, err)
		}
		c.pkgs[name] = p
	}
	return c, nil
}

// placeholders are how prose writes arguments it leaves out.
var placeholders = strings.NewReplacer("(...)", "()", "(..)", "()", "…", "x", "{...}", "{}", "{..}", "{}")

// Check returns why span does not hold, or nil.
func (c *Checker) Check(span string) error {
	src := placeholders.Replace(span)
	src = strings.NewReplacer(", ...)", ")", ", ..)", ")").Replace(src) // (a, ...)
	e, err := parser.ParseExpr(src)
	if err != nil {
		return fmt.Errorf("not a Go expression: %v", err)
	}
	_, err = c.eval(e)
	return err
}

// value is what an expression evaluates to, as far as the check can tell:
// an object of a package, a type, or a value of a type; all zero when it
// cannot tell (a placeholder).
type value struct {
	obj   types.Object
	typ   types.Type   // the type of a value, or the type named
	isTyp bool         // typ is a type, not a value's type
	tuple *types.Tuple // the results of a call with several
	name  string       // how the span wrote it, for errors
}

func (c *Checker) eval(e ast.Expr) (value, error) {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return c.eval(e.X)
	case *ast.Ident:
		return value{}, nil // a placeholder such as ctx
	case *ast.SelectorExpr:
		if id, ok := e.X.(*ast.Ident); ok {
			if p, ok := c.pkgs[id.Name]; ok {
				obj := p.Scope().Lookup(e.Sel.Name)
				if obj == nil || !obj.Exported() {
					return value{}, fmt.Errorf("%s.%s does not exist", id.Name, e.Sel.Name)
				}
				v := value{obj: obj, typ: obj.Type(), name: id.Name + "." + e.Sel.Name}
				_, v.isTyp = obj.(*types.TypeName)
				return v, nil
			}
		}
		x, err := c.eval(e.X)
		if err != nil || x.typ == nil && x.tuple == nil {
			return value{}, err
		}
		if x.tuple != nil {
			return value{}, fmt.Errorf("%s returns %d values, so .%s cannot follow it", x.name, x.tuple.Len(), e.Sel.Name)
		}
		obj, _, _ := types.LookupFieldOrMethod(x.typ, true, nil, e.Sel.Name)
		if obj == nil {
			return value{}, fmt.Errorf("%s has no field or method %s (it is %s)", x.name, e.Sel.Name, x.typ)
		}
		return value{obj: obj, typ: obj.Type(), name: x.name + "." + e.Sel.Name}, nil
	case *ast.IndexExpr:
		c.args(e.Index)
		return c.eval(e.X)
	case *ast.IndexListExpr:
		return c.eval(e.X)
	case *ast.CallExpr:
		if err := c.args(e.Args...); err != nil {
			return value{}, err
		}
		f, err := c.eval(e.Fun)
		if err != nil || f.typ == nil {
			return value{}, err
		}
		if f.isTyp { // a conversion
			return value{typ: f.typ, name: f.name + "(…)"}, nil
		}
		sig, ok := f.typ.Underlying().(*types.Signature)
		if !ok {
			return value{}, fmt.Errorf("%s is not a function", f.name)
		}
		v := value{name: f.name + "(…)"}
		switch sig.Results().Len() {
		case 0:
		case 1:
			v.typ = sig.Results().At(0).Type()
		default:
			v.tuple = sig.Results()
		}
		return v, nil
	case *ast.CompositeLit:
		t, err := c.eval(e.Type)
		if err != nil || t.typ == nil {
			return value{}, err
		}
		if !t.isTyp {
			return value{}, fmt.Errorf("%s is not a type", t.name)
		}
		st, _ := t.typ.Underlying().(*types.Struct)
		for _, el := range e.Elts {
			key := el
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				key = kv.Key
				if err := c.args(kv.Value); err != nil {
					return value{}, err
				}
			}
			id, ok := key.(*ast.Ident)
			if st == nil || !ok {
				continue
			}
			if obj, _, _ := types.LookupFieldOrMethod(t.typ, false, nil, id.Name); obj == nil {
				return value{}, fmt.Errorf("%s has no field %s", t.name, id.Name)
			}
		}
		return value{typ: t.typ, name: t.name + "{…}"}, nil
	case *ast.UnaryExpr:
		return c.eval(e.X)
	case *ast.StarExpr:
		return c.eval(e.X)
	case *ast.Ellipsis:
		return value{}, nil
	}
	return value{}, nil
}

// args checks the package names its arguments use.
func (c *Checker) args(args ...ast.Expr) error {
	for _, a := range args {
		if _, err := c.eval(a); err != nil {
			return err
		}
	}
	return nil
}
