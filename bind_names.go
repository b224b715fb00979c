package onion

import (
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/onionkit/onion/srcdoc"
)

// This file names what a tool was made of, for its errors and listings:
// the func in Go syntax, its Go name, and the options given.

// signature renders the tool in Go syntax: search(query string, limit int) []string.
// The types of the tool's own package go unqualified.
func signature(name string, in []reflect.Type, names []string, ft reflect.Type, pkgPath string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	for i, t := range in {
		if i > 0 {
			b.WriteString(", ")
		}
		n := "args"
		if i < len(names) && names[i] != "" {
			n = names[i]
		}
		b.WriteString(n + " ")
		writeType(&b, t, pkgPath)
	}
	b.WriteByte(')')
	if ft.NumOut() > 0 && ft.Out(0) != errorType {
		b.WriteByte(' ')
		writeType(&b, ft.Out(0), pkgPath)
	}
	return b.String()
}

// writeType writes t as reflect does ("[]domain.Item"), except that the
// named types of package pkgPath lose their qualifier ("[]Ticket").
func writeType(b *strings.Builder, t reflect.Type, pkgPath string) {
	if t.Name() != "" {
		if pkgPath != "" && t.PkgPath() == pkgPath {
			b.WriteString(t.Name())
		} else {
			b.WriteString(t.String())
		}
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		b.WriteByte('*')
		writeType(b, t.Elem(), pkgPath)
	case reflect.Slice:
		b.WriteString("[]")
		writeType(b, t.Elem(), pkgPath)
	case reflect.Array:
		b.WriteString("[" + strconv.Itoa(t.Len()) + "]")
		writeType(b, t.Elem(), pkgPath)
	case reflect.Map:
		b.WriteString("map[")
		writeType(b, t.Key(), pkgPath)
		b.WriteByte(']')
		writeType(b, t.Elem(), pkgPath)
	default:
		b.WriteString(t.String())
	}
}

var closureRE = regexp.MustCompile(`\.func\d+(\.\d+)*$`)

// funcName is the runtime name of a func: pkg/path.Name.
func funcName(v reflect.Value) string {
	f := runtime.FuncForPC(v.Pointer())
	if f == nil {
		return "an unknown func"
	}
	return strings.TrimSuffix(f.Name(), "-fm")
}

// goName is the Go name of the func or method: Search, Add, from its facts
// or else from its runtime name.
func goName(facts srcdoc.Func, found bool, name string) string {
	if found && facts.Name != "" {
		if i := strings.LastIndex(facts.Name, "."); i >= 0 {
			return facts.Name[i+1:]
		}
		return facts.Name
	}
	if i := strings.LastIndex(name, "."); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// describeOption names a tool option for a message.
func describeOption(o ToolOption) string {
	switch o := o.(type) {
	case methodOption:
		return "onion.Method(" + strconv.Quote(o.name) + ", ...)"
	case Intent:
		if o != "" {
			return "onion." + strings.ToUpper(string(o[:1])) + string(o[1:])
		}
	}
	return describe(o)
}

func describe(v any) string {
	if v == nil {
		return "nil"
	}
	return fmt.Sprintf("%T", v)
}
