package gosource

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/constant"
	"go/token"
	"math"
)

// enums evaluates the package's constants and returns, for each type of
// the package that has constants, their values as JSON literals in
// declaration order. A constant belongs to T when its spec names T as its
// type, inherits T through implicit repetition, or its value is typed T by
// a conversion such as T("low") or T(1) << iota. Constants whose value
// cannot be worked out from the package alone are skipped. under maps the
// names of the types in scope to their type expressions (see typeExprs);
// a later const declaration of a name hides an earlier one, as a
// function's constants hide the package's.
func enums(consts []*ast.GenDecl, under map[string]ast.Expr) map[string][]string {
	ev := &evaluator{
		consts: map[string]*constDef{},
		under:  under,
		done:   map[string]typedValue{},
	}
	var order []*constDef
	for _, d := range consts {
		var typ ast.Expr
		var values []ast.Expr
		for i, s := range d.Specs {
			s := s.(*ast.ValueSpec)
			if len(s.Values) > 0 || s.Type != nil {
				typ, values = s.Type, s.Values // otherwise repeat the previous spec
			}
			for j, n := range s.Names {
				if j >= len(values) {
					break
				}
				c := &constDef{name: n.Name, typ: typ, value: values[j], iota: int64(i)}
				if n.Name != "_" {
					ev.consts[n.Name] = c
				}
				order = append(order, c)
			}
		}
	}
	out := map[string][]string{}
	for _, c := range order {
		if c.name == "_" {
			continue
		}
		tv, ok := ev.constant(c)
		if !ok || tv.typ == "" || basicKinds[tv.typ] != 0 {
			continue
		}
		if token.IsExported(tv.typ) && !token.IsExported(c.name) {
			continue // an exported type's unexported constants are sentinels, not values
		}
		if lit, ok := jsonLiteral(tv.v); ok {
			out[tv.typ] = append(out[tv.typ], lit)
		}
	}
	return out
}

// typeExprs adds the type expressions of the non-generic types declared by
// decls to under.
func typeExprs(under map[string]ast.Expr, decls []*ast.GenDecl) map[string]ast.Expr {
	for _, d := range decls {
		for _, s := range d.Specs {
			s := s.(*ast.TypeSpec)
			if s.TypeParams == nil {
				under[s.Name.Name] = s.Type
			}
		}
	}
	return under
}

// constDef is one named constant: its declared (or inherited) type and
// value expression, and the iota of its spec.
type constDef struct {
	name  string
	typ   ast.Expr
	value ast.Expr
	iota  int64
}

// typedValue is a constant value and the name of its type: a type declared
// in the package, a predeclared type, or "" while untyped.
type typedValue struct {
	v   constant.Value
	typ string
}

// evaluator works out constant values with go/constant, the small part of
// the Go spec that enum declarations use.
type evaluator struct {
	consts map[string]*constDef
	under  map[string]ast.Expr   // package type name → its type expression
	done   map[string]typedValue // evaluated constants; an invalid v marks one in progress or failed
}

func (ev *evaluator) constant(c *constDef) (tv typedValue, ok bool) {
	if tv, seen := ev.done[c.name]; seen {
		return tv, tv.v != nil
	}
	ev.done[c.name] = typedValue{} // a reference cycle evaluates to "unknown"
	defer func() {
		// go/constant panics on operations that do not fit its operands'
		// kinds; code that does not compile cannot have an enum.
		if recover() != nil {
			tv, ok = typedValue{}, false
		}
		ev.done[c.name] = tv
	}()
	tv, ok = ev.eval(c.value, c.iota)
	if ok && c.typ != nil {
		id, isIdent := c.typ.(*ast.Ident)
		if !isIdent {
			return typedValue{}, false // a type from another package
		}
		tv, ok = ev.convert(tv, id.Name)
	}
	if !ok {
		tv = typedValue{}
	}
	return tv, ok
}

func (ev *evaluator) eval(e ast.Expr, iota int64) (typedValue, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		v := constant.MakeFromLiteral(e.Value, e.Kind, 0)
		return typedValue{v: v}, v.Kind() != constant.Unknown
	case *ast.ParenExpr:
		return ev.eval(e.X, iota)
	case *ast.Ident:
		switch e.Name {
		case "iota":
			return typedValue{v: constant.MakeInt64(iota)}, true
		case "true", "false":
			return typedValue{v: constant.MakeBool(e.Name == "true"), typ: "bool"}, true
		}
		if c, ok := ev.consts[e.Name]; ok {
			return ev.constant(c)
		}
	case *ast.UnaryExpr:
		x, ok := ev.eval(e.X, iota)
		if !ok {
			return x, false
		}
		x.v = constant.UnaryOp(e.Op, x.v, ev.unsignedBits(x.typ))
		return x, x.v.Kind() != constant.Unknown
	case *ast.BinaryExpr:
		return ev.binary(e, iota)
	case *ast.CallExpr:
		fun := ast.Unparen(e.Fun)
		id, ok := fun.(*ast.Ident)
		if !ok || len(e.Args) != 1 {
			return typedValue{}, false
		}
		x, ok := ev.eval(e.Args[0], iota)
		if !ok {
			return x, false
		}
		if id.Name == "len" && x.v.Kind() == constant.String {
			return typedValue{v: constant.MakeInt64(int64(len(constant.StringVal(x.v)))), typ: "int"}, true
		}
		if _, isType := ev.under[id.Name]; isType || basicKinds[id.Name] != 0 {
			return ev.convert(x, id.Name)
		}
	}
	return typedValue{}, false
}

func (ev *evaluator) binary(e *ast.BinaryExpr, iota int64) (typedValue, bool) {
	x, ok := ev.eval(e.X, iota)
	if !ok {
		return x, false
	}
	y, ok := ev.eval(e.Y, iota)
	if !ok {
		return y, false
	}
	switch e.Op {
	case token.SHL, token.SHR:
		s, ok := constant.Uint64Val(constant.ToInt(y.v))
		if !ok {
			return typedValue{}, false
		}
		x.v = constant.Shift(constant.ToInt(x.v), e.Op, uint(s))
		return x, x.v.Kind() == constant.Int
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
		return typedValue{v: constant.MakeBool(constant.Compare(x.v, e.Op, y.v)), typ: "bool"}, true
	}
	typ := x.typ
	if typ == "" {
		typ = y.typ
	}
	op := e.Op
	if op == token.QUO && x.v.Kind() == constant.Int && y.v.Kind() == constant.Int && ev.kind(typ) != kindFloat {
		op = token.QUO_ASSIGN // integer division, as for untyped and integer constants
	}
	v := constant.BinaryOp(x.v, op, y.v)
	return ev.convert(typedValue{v: v}, typ)
}

// convert gives tv the type named typ, converting its value to the kind of
// typ's underlying type when that is known.
func (ev *evaluator) convert(tv typedValue, typ string) (typedValue, bool) {
	v := tv.v
	switch ev.kind(typ) {
	case kindString:
		if v.Kind() == constant.Int {
			r, ok := constant.Int64Val(v)
			if !ok {
				return typedValue{}, false
			}
			v = constant.MakeString(string(rune(r)))
		}
	case kindInt:
		v = constant.ToInt(v)
	case kindFloat:
		v = constant.ToFloat(v)
	case kindComplex:
		v = constant.ToComplex(v)
	}
	if k := ev.kind(typ); k != kindUnknown && v.Kind() != valueKinds[k] {
		return typedValue{}, false
	}
	return typedValue{v: v, typ: typ}, v.Kind() != constant.Unknown
}

// kind is the kind of the predeclared type underlying typ, or kindUnknown
// (for "", a struct, a type from another package).
func (ev *evaluator) kind(typ string) basicKind {
	for range 100 { // a bound, in case of a cycle in code that does not compile
		if k := basicKinds[typ]; k != 0 {
			return k
		}
		id, ok := ev.under[typ].(*ast.Ident)
		if !ok {
			return kindUnknown
		}
		typ = id.Name
	}
	return kindUnknown
}

// unsignedBits is the size of typ's underlying type when it is an unsigned
// integer, for ^x; 0 otherwise.
func (ev *evaluator) unsignedBits(typ string) uint {
	for range 100 {
		if bits, ok := unsignedSizes[typ]; ok {
			return bits
		}
		id, ok := ev.under[typ].(*ast.Ident)
		if !ok {
			return 0
		}
		typ = id.Name
	}
	return 0
}

type basicKind int

const (
	kindUnknown basicKind = iota
	kindBool
	kindString
	kindInt
	kindFloat
	kindComplex
)

var valueKinds = [...]constant.Kind{
	kindBool:    constant.Bool,
	kindString:  constant.String,
	kindInt:     constant.Int,
	kindFloat:   constant.Float,
	kindComplex: constant.Complex,
}

var basicKinds = map[string]basicKind{
	"bool": kindBool, "string": kindString,
	"int": kindInt, "int8": kindInt, "int16": kindInt, "int32": kindInt, "int64": kindInt, "rune": kindInt,
	"uint": kindInt, "uint8": kindInt, "uint16": kindInt, "uint32": kindInt, "uint64": kindInt, "uintptr": kindInt, "byte": kindInt,
	"float32": kindFloat, "float64": kindFloat,
	"complex64": kindComplex, "complex128": kindComplex,
}

var unsignedSizes = map[string]uint{
	"uint": 64, "uint8": 8, "byte": 8, "uint16": 16, "uint32": 32, "uint64": 64, "uintptr": 64,
}

// jsonLiteral writes v as JSON: a string, number or boolean.
func jsonLiteral(v constant.Value) (string, bool) {
	switch v.Kind() {
	case constant.String:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(constant.StringVal(v)) != nil {
			return "", false
		}
		return string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), true
	case constant.Int:
		return v.ExactString(), true
	case constant.Float:
		f, _ := constant.Float64Val(v)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return "", false
		}
		b, err := json.Marshal(f)
		return string(b), err == nil
	case constant.Bool:
		return v.String(), true
	}
	return "", false
}
