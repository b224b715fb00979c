package script

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/cascadia"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// htmlModule and xmlModule parse a page or an XML answer into nodes that
// scripts select from with CSS selectors (cascadia).
var (
	htmlModule = &starlarkstruct.Module{Name: "html", Members: starlark.StringDict{
		"parse": starlark.NewBuiltin("html.parse", safe(parseMarkup(false))),
	}}
	xmlModule = &starlarkstruct.Module{Name: "xml", Members: starlark.StringDict{
		"parse": starlark.NewBuiltin("xml.parse", safe(parseMarkup(true))),
	}}
)

// The bounds of a parsed document: selectors and text walk the tree, so its
// depth and size are capped, and parsing is charged to MaxSteps.
const (
	maxMarkupDepth = 512
	maxMarkupNodes = 500_000
)

// doc is a parsed document. For XML, names keeps each element's name and
// attributes as written; the tree itself holds them lower-cased, as CSS
// selectors expect.
type doc struct {
	root  *html.Node
	isXML bool
	names map[*html.Node]xmlNames
	nodes int
	red   *redactor // the call's: what a script reads of the document is redacted
}

type xmlNames struct {
	tag   string
	attrs []html.Attribute
}

func parseMarkup(isXML bool) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var text string
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &text); err != nil {
			return nil, err
		}
		if err := checkInput(b.Name(), text); err != nil {
			return nil, err
		}
		if err := charge(thread, len(text)); err != nil {
			return nil, err
		}
		red, _ := thread.Local(redactorKey).(*redactor)
		d := &doc{isXML: isXML, red: red}
		var err error
		if isXML {
			err = d.parseXML(text)
		} else {
			d.root, err = html.Parse(strings.NewReader(text))
			if err == nil {
				err = d.check()
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.Name(), err)
		}
		if err := allocate(thread, int64(len(text))+int64(d.nodes)*markupNodeBytes, func() string { return "the tree of " + b.Name() }); err != nil {
			return nil, err
		}
		return &node{doc: d, n: d.root}, nil
	}
}

// markupNodeBytes is what one parsed node takes.
const markupNodeBytes = 128

// check counts the nodes of an HTML tree and measures its depth.
func (d *doc) check() error {
	type item struct {
		n     *html.Node
		depth int
	}
	stack := []item{{d.root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		d.nodes++
		if d.nodes > maxMarkupNodes {
			return fmt.Errorf("more than %d nodes", maxMarkupNodes)
		}
		if it.depth > maxMarkupDepth {
			return fmt.Errorf("elements nested deeper than %d", maxMarkupDepth)
		}
		for c := it.n.FirstChild; c != nil; c = c.NextSibling {
			stack = append(stack, item{c, it.depth + 1})
		}
	}
	return nil
}

// parseXML builds the tree of an XML text, names by their local part.
func (d *doc) parseXML(text string) error {
	dec := xml.NewDecoder(strings.NewReader(text))
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	dec.CharsetReader = charset.NewReaderLabel
	d.root = &html.Node{Type: html.DocumentNode}
	d.names = map[*html.Node]xmlNames{}
	cur, depth := d.root, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			d.nodes++
			if depth > maxMarkupDepth {
				return fmt.Errorf("elements nested deeper than %d", maxMarkupDepth)
			}
			if d.nodes > maxMarkupNodes {
				return fmt.Errorf("more than %d nodes", maxMarkupNodes)
			}
			n := &html.Node{Type: html.ElementNode, Data: strings.ToLower(t.Name.Local)}
			names := xmlNames{tag: t.Name.Local}
			for _, a := range t.Attr {
				n.Attr = append(n.Attr, html.Attribute{Key: strings.ToLower(a.Name.Local), Val: a.Value})
				names.attrs = append(names.attrs, html.Attribute{Key: a.Name.Local, Val: a.Value})
			}
			d.names[n] = names
			cur.AppendChild(n)
			cur = n
		case xml.EndElement:
			if cur.Parent != nil {
				cur, depth = cur.Parent, depth-1
			}
		case xml.CharData:
			d.nodes++
			if d.nodes > maxMarkupNodes {
				return fmt.Errorf("more than %d nodes", maxMarkupNodes)
			}
			cur.AppendChild(&html.Node{Type: html.TextNode, Data: string(t)})
		}
	}
	if d.root.FirstChild == nil {
		return errors.New("no element")
	}
	return nil
}

// node is an element or document: n.tag, n.text, n.attrs, n.attr(name),
// n.children, n.select(css) and n.select_one(css).
type node struct {
	doc *doc
	n   *html.Node
}

var _ starlark.HasAttrs = (*node)(nil)

func (n *node) String() string { return fmt.Sprintf("<%s %s>", n.Type(), n.tag()) }
func (n *node) Type() string {
	if n.doc.isXML {
		return "xml"
	}
	return "html"
}
func (n *node) Freeze()               {}
func (n *node) Truth() starlark.Bool  { return true }
func (n *node) Hash() (uint32, error) { return 0, fmt.Errorf("unhashable type: %s", n.Type()) }
func (n *node) AttrNames() []string {
	return []string{"attr", "attrs", "children", "select", "select_one", "tag", "text"}
}

func (n *node) tag() string {
	if n.n.Type != html.ElementNode {
		return ""
	}
	if n.doc.isXML {
		return n.doc.names[n.n].tag
	}
	return n.n.Data
}

func (n *node) attributes() []html.Attribute {
	if n.doc.isXML {
		return n.doc.names[n.n].attrs
	}
	return n.n.Attr
}

// Attr is attr with what it reads of the document redacted: markup joins
// text nodes and decodes references, so a secret can be whole in a text or
// an attribute that no view of the response showed.
func (n *node) Attr(name string) (starlark.Value, error) {
	v, err := n.attr(name)
	if err != nil || v == nil {
		return v, err
	}
	return n.doc.red.starlarkValue(v), nil
}

func (n *node) attr(name string) (starlark.Value, error) {
	switch name {
	case "tag":
		return starlark.String(n.tag()), nil
	case "text":
		return starlark.String(n.text()), nil
	case "attrs":
		d := starlark.NewDict(len(n.n.Attr))
		for _, a := range n.attributes() {
			_ = d.SetKey(starlark.String(a.Key), starlark.String(a.Val))
		}
		return d, nil
	case "children":
		var out []starlark.Value
		for c := n.n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode {
				out = append(out, &node{n.doc, c})
			}
		}
		return starlark.NewList(out), nil
	case "attr":
		return starlark.NewBuiltin("attr", safe(func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var key string
			var def starlark.Value = starlark.None
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &key, &def); err != nil {
				return nil, err
			}
			for _, a := range n.attributes() {
				if strings.EqualFold(a.Key, key) {
					return starlark.String(a.Val), nil
				}
			}
			return def, nil
		})), nil
	case "select", "select_one":
		return starlark.NewBuiltin(name, safe(func(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var sel string
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &sel); err != nil {
				return nil, err
			}
			m, err := cascadia.ParseGroup(sel)
			if err != nil {
				return nil, fmt.Errorf("%s(%q): %w", b.Name(), sel, err)
			}
			if err := charge(thread, n.doc.nodes*stepBytes); err != nil {
				return nil, err
			}
			found := n.query(m, name == "select_one")
			if name == "select_one" {
				if len(found) == 0 {
					return starlark.None, nil
				}
				return found[0], nil
			}
			return starlark.NewList(found), nil
		})), nil
	}
	return nil, nil
}

// query returns the descendants of n that match m, in document order,
// walking the tree without recursion.
func (n *node) query(m cascadia.Matcher, first bool) []starlark.Value {
	var out []starlark.Value
	stack := []*html.Node{}
	for c := n.n.LastChild; c != nil; c = c.PrevSibling {
		stack = append(stack, c)
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.Type == html.ElementNode && m.Match(x) {
			out = append(out, &node{n.doc, x})
			if first {
				return out
			}
		}
		for c := x.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return out
}

// skipText are HTML elements whose content is not text a reader sees.
var skipText = map[string]bool{"script": true, "style": true, "template": true, "noscript": true, "head": true}

// blocks are HTML elements that end a line of text.
var blocks = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "br": true, "dd": true, "div": true,
	"dl": true, "dt": true, "figcaption": true, "footer": true, "form": true, "h1": true, "h2": true, "h3": true,
	"h4": true, "h5": true, "h6": true, "header": true, "hr": true, "li": true, "main": true, "nav": true,
	"ol": true, "p": true, "pre": true, "section": true, "table": true, "tr": true, "ul": true,
}

// text is the text inside n: in HTML without scripts and styles, with a
// line break after each block.
func (n *node) text() string {
	var b strings.Builder
	type item struct {
		n    *html.Node
		exit bool
	}
	stack := []item{{n.n, false}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x := it.n
		if it.exit {
			if s := b.String(); len(s) > 0 && s[len(s)-1] != '\n' {
				b.WriteByte('\n')
			}
			continue
		}
		switch x.Type {
		case html.TextNode:
			b.WriteString(x.Data)
			continue
		case html.ElementNode:
			if !n.doc.isXML && skipText[x.Data] && x != n.n {
				continue
			}
			if !n.doc.isXML && blocks[x.Data] {
				stack = append(stack, item{x, true})
			}
		}
		for c := x.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, item{c, false})
		}
	}
	return strings.Join(nonEmptyLines(b.String()), "\n")
}
