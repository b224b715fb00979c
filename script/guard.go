package script

import (
	"strconv"

	"go.starlark.net/syntax"
)

// Starlark computes x * n, x + y, sep.join(l), str(x) and the like inside
// the interpreter, with no hook to refuse a result too big to allocate. So
// guard rewrites a parsed file, before it is compiled, so that each of
// those operations is a call of a hook (hooks.go) that estimates the bytes
// first and charges them to the call's MaxMemory:
//
//	x + y, x * y, x % y, x | y   $binary("+", x, y) ...
//	x += y (and *=, %=, |=)      x = $augment("+", x, y); an indexed or
//	                             dotted target is evaluated once, into a
//	                             temporary, as the interpreter does
//	x[i:j:k]                     $slice(x, i, j, k)
//	x.name                       $attr(x, "name"): a method that builds a
//	                             value (join, replace, format, extend ...)
//	                             comes back guarded
//	[e for ...], {k: v for ...}  [$elem(e) for ...]: each element charged
//	d[k] = v                     d[k] = $elem(v)
//
// The hooks' names start with $, which a script cannot write, so a script
// can neither call nor shadow them. The builtins that build values (list,
// str, json.encode ...) are replaced by guarded ones among the predeclared
// names instead.
type guard struct{ temps int }

// guardFile rewrites f in place.
func guardFile(f *syntax.File) {
	g := &guard{}
	f.Stmts = g.stmts(f.Stmts)
}

func (g *guard) stmts(ss []syntax.Stmt) []syntax.Stmt {
	out := make([]syntax.Stmt, 0, len(ss))
	for _, s := range ss {
		out = append(out, g.stmt(s)...)
	}
	return out
}

func (g *guard) stmt(s syntax.Stmt) []syntax.Stmt {
	switch s := s.(type) {
	case *syntax.AssignStmt:
		if s.Op != syntax.EQ {
			return g.augment(s)
		}
		s.RHS = g.expr(s.RHS)
		if _, ok := s.LHS.(*syntax.IndexExpr); ok {
			s.RHS = hook("$elem", s.OpPos, s.RHS) // d[k] = v grows d
		}
		s.LHS = g.target(s.LHS)
	case *syntax.DefStmt:
		g.params(s.Params)
		s.Body = g.stmts(s.Body)
	case *syntax.ExprStmt:
		s.X = g.expr(s.X)
	case *syntax.ForStmt:
		s.Vars = g.target(s.Vars)
		s.X = g.expr(s.X)
		s.Body = g.stmts(s.Body)
	case *syntax.WhileStmt:
		s.Cond = g.expr(s.Cond)
		s.Body = g.stmts(s.Body)
	case *syntax.IfStmt:
		s.Cond = g.expr(s.Cond)
		s.True = g.stmts(s.True)
		s.False = g.stmts(s.False)
	case *syntax.ReturnStmt:
		s.Result = g.expr(s.Result)
	}
	return []syntax.Stmt{s}
}

// augment rewrites x op= y as x = $augment(op, x, y), which extends a list
// (or updates a dict) in place as the interpreter does.
func (g *guard) augment(s *syntax.AssignStmt) []syntax.Stmt {
	op := literal(binaryOf[s.Op].String())
	rhs := g.expr(s.RHS)
	switch lhs := s.LHS.(type) {
	case *syntax.IndexExpr:
		x, i := g.temp(lhs.Lbrack), g.temp(lhs.Lbrack)
		load := &syntax.IndexExpr{X: ident(x, lhs.Lbrack), Lbrack: lhs.Lbrack, Y: ident(i, lhs.Lbrack), Rbrack: lhs.Rbrack}
		return []syntax.Stmt{
			assign(ident(x, lhs.Lbrack), g.expr(lhs.X), s.OpPos),
			assign(ident(i, lhs.Lbrack), g.expr(lhs.Y), s.OpPos),
			assign(&syntax.IndexExpr{X: ident(x, lhs.Lbrack), Lbrack: lhs.Lbrack, Y: ident(i, lhs.Lbrack), Rbrack: lhs.Rbrack},
				hook("$augment", s.OpPos, op, load, rhs), s.OpPos),
		}
	case *syntax.DotExpr:
		x := g.temp(lhs.Dot)
		load := &syntax.DotExpr{X: ident(x, lhs.Dot), Dot: lhs.Dot, NamePos: lhs.NamePos, Name: ident(lhs.Name.Name, lhs.NamePos)}
		return []syntax.Stmt{
			assign(ident(x, lhs.Dot), g.expr(lhs.X), s.OpPos),
			assign(&syntax.DotExpr{X: ident(x, lhs.Dot), Dot: lhs.Dot, NamePos: lhs.NamePos, Name: ident(lhs.Name.Name, lhs.NamePos)},
				hook("$augment", s.OpPos, op, load, rhs), s.OpPos),
		}
	case *syntax.Ident:
		return []syntax.Stmt{assign(ident(lhs.Name, lhs.NamePos), hook("$augment", s.OpPos, op, ident(lhs.Name, lhs.NamePos), rhs), s.OpPos)}
	}
	s.RHS = rhs // the resolver refuses any other target
	return []syntax.Stmt{s}
}

// binaryOf is the operator of each augmented assignment.
var binaryOf = map[syntax.Token]syntax.Token{
	syntax.PLUS_EQ: syntax.PLUS, syntax.MINUS_EQ: syntax.MINUS, syntax.STAR_EQ: syntax.STAR,
	syntax.SLASH_EQ: syntax.SLASH, syntax.SLASHSLASH_EQ: syntax.SLASHSLASH, syntax.PERCENT_EQ: syntax.PERCENT,
	syntax.AMP_EQ: syntax.AMP, syntax.PIPE_EQ: syntax.PIPE, syntax.CIRCUMFLEX_EQ: syntax.CIRCUMFLEX,
	syntax.LTLT_EQ: syntax.LTLT, syntax.GTGT_EQ: syntax.GTGT,
}

// temp names a new temporary: a local in a function, a global (each used
// once) at the top level.
func (g *guard) temp(syntax.Position) string {
	g.temps++
	return "$t" + strconv.Itoa(g.temps)
}

// target rewrites the expressions inside an assignment's target, leaving
// the target itself one.
func (g *guard) target(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.IndexExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
	case *syntax.DotExpr:
		e.X = g.expr(e.X)
	case *syntax.ParenExpr:
		e.X = g.target(e.X)
	case *syntax.ListExpr:
		for i := range e.List {
			e.List[i] = g.target(e.List[i])
		}
	case *syntax.TupleExpr:
		for i := range e.List {
			e.List[i] = g.target(e.List[i])
		}
	}
	return e
}

// params rewrites the default values of parameters.
func (g *guard) params(ps []syntax.Expr) {
	for _, p := range ps {
		if b, ok := p.(*syntax.BinaryExpr); ok && b.Op == syntax.EQ {
			b.Y = g.expr(b.Y)
		}
	}
}

// growing are the binary operators whose result can be much bigger than
// their operands.
var growing = map[syntax.Token]bool{syntax.PLUS: true, syntax.STAR: true, syntax.PERCENT: true, syntax.PIPE: true}

func (g *guard) expr(e syntax.Expr) syntax.Expr {
	switch e := e.(type) {
	case *syntax.BinaryExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
		if growing[e.Op] {
			return hook("$binary", e.OpPos, literal(e.Op.String()), e.X, e.Y)
		}
	case *syntax.CallExpr:
		e.Fn = g.expr(e.Fn)
		for i, a := range e.Args {
			switch a := a.(type) {
			case *syntax.BinaryExpr: // name=value
				if a.Op == syntax.EQ {
					a.Y = g.expr(a.Y)
					continue
				}
			case *syntax.UnaryExpr: // *args, **kwargs
				if a.Op == syntax.STAR || a.Op == syntax.STARSTAR {
					a.X = g.expr(a.X)
					continue
				}
			}
			e.Args[i] = g.expr(a)
		}
	case *syntax.Comprehension:
		for _, c := range e.Clauses {
			switch c := c.(type) {
			case *syntax.ForClause:
				c.Vars = g.target(c.Vars)
				c.X = g.expr(c.X)
			case *syntax.IfClause:
				c.Cond = g.expr(c.Cond)
			}
		}
		if d, ok := e.Body.(*syntax.DictEntry); ok {
			d.Key = g.expr(d.Key)
			d.Value = hook("$elem", d.Colon, g.expr(d.Value))
		} else {
			e.Body = hook("$elem", e.Lbrack, g.expr(e.Body))
		}
	case *syntax.CondExpr:
		e.Cond, e.True, e.False = g.expr(e.Cond), g.expr(e.True), g.expr(e.False)
	case *syntax.DictExpr:
		for _, x := range e.List {
			if d, ok := x.(*syntax.DictEntry); ok {
				d.Key, d.Value = g.expr(d.Key), g.expr(d.Value)
			}
		}
	case *syntax.DotExpr:
		return hook("$attr", e.NamePos, g.expr(e.X), literal(e.Name.Name))
	case *syntax.IndexExpr:
		e.X, e.Y = g.expr(e.X), g.expr(e.Y)
	case *syntax.LambdaExpr:
		g.params(e.Params)
		e.Body = g.expr(e.Body)
	case *syntax.ListExpr:
		for i := range e.List {
			e.List[i] = g.expr(e.List[i])
		}
	case *syntax.TupleExpr:
		for i := range e.List {
			e.List[i] = g.expr(e.List[i])
		}
	case *syntax.ParenExpr:
		e.X = g.expr(e.X)
	case *syntax.SliceExpr:
		return hook("$slice", e.Lbrack, g.expr(e.X), g.orNone(e.Lo, e.Lbrack), g.orNone(e.Hi, e.Lbrack), g.orNone(e.Step, e.Lbrack))
	case *syntax.UnaryExpr:
		e.X = g.expr(e.X)
	}
	return e
}

func (g *guard) orNone(e syntax.Expr, pos syntax.Position) syntax.Expr {
	if e == nil {
		return ident("$none", pos)
	}
	return g.expr(e)
}

// hook is a call of the hook name at pos, where an error in it is told.
func hook(name string, pos syntax.Position, args ...syntax.Expr) *syntax.CallExpr {
	return &syntax.CallExpr{Fn: ident(name, pos), Lparen: pos, Args: args, Rparen: pos}
}

func ident(name string, pos syntax.Position) *syntax.Ident {
	return &syntax.Ident{Name: name, NamePos: pos}
}

func literal(s string) *syntax.Literal {
	return &syntax.Literal{Token: syntax.STRING, Raw: strconv.Quote(s), Value: s}
}

func assign(lhs, rhs syntax.Expr, pos syntax.Position) *syntax.AssignStmt {
	return &syntax.AssignStmt{Op: syntax.EQ, OpPos: pos, LHS: lhs, RHS: rhs}
}
