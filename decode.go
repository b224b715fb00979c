package onion

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/invopop/jsonschema"
)

// The arguments of every call are decoded by a plan built once per tool
// from the Go type and its schema. The plan reads the JSON text straight
// into the Go value and checks on the way what the schema asks for (types,
// required fields, unknown fields, enums, bounds, lengths, patterns), so
// the fast path needs no validator; a full JSON Schema validator runs only
// to explain arguments the plan rejected.

// The Go types that travel differently from their kind.
var (
	durationType     = reflect.TypeFor[time.Duration]()   // "90s"
	timeType         = reflect.TypeFor[time.Time]()       // RFC 3339
	rawMessageType   = reflect.TypeFor[json.RawMessage]() // any JSON
	customSchemaType = reflect.TypeFor[interface{ JSONSchema() *jsonschema.Schema }]()
)

// objectPlan decodes a JSON object into a struct.
type objectPlan struct {
	fields    []fieldPlan
	byName    map[string]int
	unchecked bool // the schema holds keywords the plan cannot check
}

type fieldPlan struct {
	name     string
	index    []int
	required bool
	// nullable fields take null as absent: optional fields, which strict
	// schemas send as null.
	nullable bool
	def      reflect.Value
	dec      decodeFunc
}

// decodeFunc decodes the next JSON value of sc into the settable v.
type decodeFunc func(sc *scanner, v reflect.Value) error

// jsonField is a struct field as encoding/json sees it.
type jsonField struct {
	name      string
	index     []int
	typ       reflect.Type
	omitempty bool
	tagged    bool
}

// jsonFields lists the fields of struct type t the way encoding/json does:
// json tag names, "-" skipped, unexported skipped, embedded structs
// flattened with the shallowest (then tagged) field winning a name.
func jsonFields(t reflect.Type) []jsonField {
	type entry struct {
		f     jsonField
		depth int
	}
	var all []entry
	var walk func(t reflect.Type, index []int, depth int)
	walk = func(t reflect.Type, index []int, depth int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			ft := sf.Type
			if sf.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					walk(et, idx, depth+1)
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			f := jsonField{name: name, index: idx, typ: ft, tagged: name != ""}
			if f.name == "" {
				f.name = sf.Name
			}
			f.omitempty = strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
			all = append(all, entry{f, depth})
		}
	}
	walk(t, nil, 0)
	var out []jsonField
	for i, e := range all {
		keep := true
		for j, o := range all {
			if i == j || o.f.name != e.f.name {
				continue
			}
			if o.depth < e.depth || o.depth == e.depth && (o.f.tagged && !e.f.tagged || o.f.tagged == e.f.tagged) {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, e.f)
		}
	}
	return out
}

func newObjectPlan(t reflect.Type, s *jsonschema.Schema) (*objectPlan, error) {
	p := &objectPlan{byName: map[string]int{}}
	p.unchecked = uncheckedKeywords(s)
	for _, f := range jsonFields(t) {
		prop, ok := s.Properties.Get(f.name)
		if !ok {
			continue
		}
		dec, err := p.decoderFor(f.typ, prop)
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", f.name, err)
		}
		fp := fieldPlan{name: f.name, index: f.index, dec: dec}
		for _, r := range s.Required {
			if r == f.name {
				fp.required = true
			}
		}
		fp.nullable = !fp.required
		if prop.Default != nil {
			def := reflect.New(f.typ)
			raw, _ := json.Marshal(prop.Default)
			if err := json.Unmarshal(raw, def.Interface()); err != nil {
				// invopop keeps tag defaults as strings: try the literal.
				if s, ok := prop.Default.(string); !ok || json.Unmarshal([]byte(s), def.Interface()) != nil {
					return nil, fmt.Errorf("field %s: default %v does not fit %s", f.name, prop.Default, f.typ)
				}
			}
			fp.def = def.Elem()
		}
		p.byName[f.name] = len(p.fields)
		p.fields = append(p.fields, fp)
	}
	return p, nil
}

// uncheckedKeywords reports keywords of s (not of its properties) that the
// plan does not check itself.
func uncheckedKeywords(s *jsonschema.Schema) bool {
	return s.Const != nil || s.MultipleOf != "" || s.UniqueItems || s.MaxProperties != nil ||
		s.MinProperties != nil || len(s.PatternProperties) > 0 || len(s.AllOf) > 0 ||
		len(s.OneOf) > 0 || len(s.AnyOf) > 0 || s.Not != nil || s.If != nil ||
		len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 || s.Contains != nil ||
		len(s.PrefixItems) > 0 || s.Ref != "" || s.PropertyNames != nil
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decoderFor builds the decoder of one value of type t under schema s.
func (p *objectPlan) decoderFor(t reflect.Type, s *jsonschema.Schema) (decodeFunc, error) {
	if s == nil {
		s = &jsonschema.Schema{}
	}
	if uncheckedKeywords(s) {
		p.unchecked = true
	}
	switch {
	case t.Kind() == reflect.Pointer:
		elem, err := p.decoderFor(t.Elem(), s)
		if err != nil {
			return nil, err
		}
		return func(sc *scanner, v reflect.Value) error {
			if sc.null() {
				v.SetZero()
				return nil
			}
			if v.IsNil() {
				v.Set(reflect.New(t.Elem()))
			}
			return elem(sc, v.Elem())
		}, nil
	case t == durationType:
		return decodeDuration, nil
	case t == timeType:
		return decodeTime, nil
	case reflect.PointerTo(t).Implements(customSchemaType) || t.Implements(customSchemaType):
		p.unchecked = true
		return decodeFallback, nil
	case t.Kind() != reflect.Interface && (reflect.PointerTo(t).Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType)):
		p.unchecked = p.unchecked || hasConstraints(s)
		return decodeFallback, nil
	}
	c, err := newConstraints(s)
	if err != nil {
		p.unchecked = true
	}
	switch t.Kind() {
	case reflect.String:
		return func(sc *scanner, v reflect.Value) error {
			str, err := sc.str()
			if err != nil {
				return err
			}
			if err := c.checkString(str); err != nil {
				return err
			}
			v.SetString(str)
			return nil
		}, nil
	case reflect.Bool:
		return func(sc *scanner, v reflect.Value) error {
			b, err := sc.boolean()
			if err != nil {
				return err
			}
			v.SetBool(b)
			return nil
		}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(sc *scanner, v reflect.Value) error {
			n, err := sc.integer()
			if err != nil {
				return err
			}
			if v.OverflowInt(n) {
				return fmt.Errorf("expected integer fitting %s, got %d", v.Type(), n)
			}
			if err := c.checkNumber(float64(n)); err != nil {
				return err
			}
			v.SetInt(n)
			return nil
		}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(sc *scanner, v reflect.Value) error {
			n, err := sc.integer()
			if err != nil {
				return err
			}
			if n < 0 || v.OverflowUint(uint64(n)) {
				return fmt.Errorf("expected integer from 0 fitting %s, got %d", v.Type(), n)
			}
			if err := c.checkNumber(float64(n)); err != nil {
				return err
			}
			v.SetUint(uint64(n))
			return nil
		}, nil
	case reflect.Float32, reflect.Float64:
		return func(sc *scanner, v reflect.Value) error {
			f, err := sc.number()
			if err != nil {
				return err
			}
			if v.OverflowFloat(f) {
				return fmt.Errorf("expected number fitting %s, got %g", v.Type(), f)
			}
			if err := c.checkNumber(f); err != nil {
				return err
			}
			v.SetFloat(f)
			return nil
		}, nil
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return decodeFallback, nil // base64, as encoding/json
		}
		elem, err := p.decoderFor(t.Elem(), s.Items)
		if err != nil {
			return nil, err
		}
		return func(sc *scanner, v reflect.Value) error {
			if !sc.open('[') {
				return sc.typeErr("array")
			}
			v.Set(reflect.MakeSlice(t, 0, 0))
			for n := 0; ; n++ {
				if sc.close(']') {
					return c.checkItems(n)
				}
				if n > 0 && !sc.comma() {
					return sc.syntaxErr("expected , or ] in array")
				}
				v.Grow(1)
				v.SetLen(n + 1)
				if err := elem(sc, v.Index(n)); err != nil {
					return &pathError{index: n, err: err}
				}
			}
		}, nil
	case reflect.Struct:
		sub, err := newObjectPlan(t, s)
		if err != nil {
			return nil, err
		}
		if sub.unchecked {
			p.unchecked = true
		}
		return sub.decode, nil
	default: // maps, arrays, interfaces
		p.unchecked = p.unchecked || hasConstraints(s)
		return decodeFallback, nil
	}
}

// hasConstraints reports whether a schema subtree holds any keyword that
// restricts values beyond what json.Unmarshal checks.
func hasConstraints(s *jsonschema.Schema) bool {
	if s == nil {
		return false
	}
	if len(s.Enum) > 0 || s.Minimum != "" || s.Maximum != "" || s.ExclusiveMinimum != "" || s.ExclusiveMaximum != "" ||
		s.MinLength != nil || s.MaxLength != nil || s.Pattern != "" || s.MinItems != nil || s.MaxItems != nil ||
		uncheckedKeywords(s) || len(s.Required) > 0 {
		return true
	}
	if hasConstraints(s.Items) {
		return true
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties != jsonschema.TrueSchema && s.AdditionalProperties != jsonschema.FalseSchema {
		return hasConstraints(s.AdditionalProperties)
	}
	return false
}

// decode reads an object into the struct v.
func (p *objectPlan) decode(sc *scanner, v reflect.Value) error {
	if !sc.open('{') {
		return sc.typeErr("object")
	}
	var seenSmall uint64
	var seenBig []bool
	if len(p.fields) > 64 {
		seenBig = make([]bool, len(p.fields))
	}
	for n := 0; ; n++ {
		if sc.close('}') {
			break
		}
		if n > 0 && !sc.comma() {
			return sc.syntaxErr("expected , or } in object")
		}
		key, err := sc.str()
		if err != nil {
			return err
		}
		if !sc.colon() {
			return sc.syntaxErr("expected : after object key")
		}
		i, ok := p.lookup(key)
		if !ok {
			return &pathError{field: key, err: errUnknownField}
		}
		f := &p.fields[i]
		if f.nullable && sc.null() {
			continue
		}
		if seenBig != nil {
			seenBig[i] = true
		} else {
			seenSmall |= 1 << i
		}
		if err := f.dec(sc, fieldByIndex(v, f.index)); err != nil {
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

func (p *objectPlan) lookup(key string) (int, bool) {
	if len(p.fields) <= 8 {
		for i := range p.fields {
			if p.fields[i].name == key {
				return i, true
			}
		}
		return 0, false
	}
	i, ok := p.byName[key]
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
	errUnknownField = fmt.Errorf("unknown field")
	errMissing      = fmt.Errorf("required field is missing")
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

func decodeDuration(sc *scanner, v reflect.Value) error {
	s, err := sc.str()
	if err != nil {
		return err
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf(`expected a duration such as "90s" or "1h30m", got %q`, s)
	}
	v.SetInt(int64(d))
	return nil
}

func decodeTime(sc *scanner, v reflect.Value) error {
	s, err := sc.str()
	if err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("expected a date-time such as \"2026-11-30T16:00:00Z\" (RFC 3339), got %q", s)
	}
	v.Set(reflect.ValueOf(t))
	return nil
}

// decodeFallback hands one value to encoding/json: maps, arrays, any and
// types with their own UnmarshalJSON.
func decodeFallback(sc *scanner, v reflect.Value) error {
	raw, err := sc.skip()
	if err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(raw), v.Addr().Interface()); err != nil {
		var te *json.UnmarshalTypeError
		if ok := asType(err, &te); ok {
			return fmt.Errorf("expected %s, got %s", te.Type, te.Value)
		}
		return err
	}
	return nil
}

func asType[T error](err error, target *T) bool {
	t, ok := err.(T)
	if ok {
		*target = t
	}
	return ok
}

// constraints are the value keywords the plan checks itself.
type constraints struct {
	enum               []any
	min, max           *float64
	exclMin, exclMax   *float64
	minLen, maxLen     int
	pattern            *regexp.Regexp
	minItems, maxItems int
}

func newConstraints(s *jsonschema.Schema) (*constraints, error) {
	c := &constraints{enum: s.Enum, minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
	num := func(n json.Number) *float64 {
		if n == "" {
			return nil
		}
		f, err := n.Float64()
		if err != nil {
			return nil
		}
		return &f
	}
	c.min, c.max, c.exclMin, c.exclMax = num(s.Minimum), num(s.Maximum), num(s.ExclusiveMinimum), num(s.ExclusiveMaximum)
	if s.MinLength != nil {
		c.minLen = int(*s.MinLength)
	}
	if s.MaxLength != nil {
		c.maxLen = int(*s.MaxLength)
	}
	if s.MinItems != nil {
		c.minItems = int(*s.MinItems)
	}
	if s.MaxItems != nil {
		c.maxItems = int(*s.MaxItems)
	}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return c, fmt.Errorf("pattern %q: %w", s.Pattern, err)
		}
		c.pattern = re
	}
	return c, nil
}

func (c *constraints) checkString(s string) error {
	if len(c.enum) > 0 {
		ok := false
		for _, e := range c.enum {
			if es, isStr := e.(string); isStr && es == s {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("expected one of %s, got %q", enumList(c.enum), s)
		}
	}
	if c.minLen >= 0 || c.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if c.minLen >= 0 && n < c.minLen {
			return fmt.Errorf("expected at least %d characters, got %d", c.minLen, n)
		}
		if c.maxLen >= 0 && n > c.maxLen {
			return fmt.Errorf("expected at most %d characters, got %d", c.maxLen, n)
		}
	}
	if c.pattern != nil && !c.pattern.MatchString(s) {
		return fmt.Errorf("expected a string matching %s, got %q", c.pattern, s)
	}
	return nil
}

func (c *constraints) checkNumber(f float64) error {
	if len(c.enum) > 0 {
		ok := false
		for _, e := range c.enum {
			if toFloat(e) == f {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("expected one of %s, got %v", enumList(c.enum), f)
		}
	}
	switch {
	case c.min != nil && f < *c.min:
		return fmt.Errorf("expected a number >= %v, got %v", *c.min, f)
	case c.max != nil && f > *c.max:
		return fmt.Errorf("expected a number <= %v, got %v", *c.max, f)
	case c.exclMin != nil && f <= *c.exclMin:
		return fmt.Errorf("expected a number > %v, got %v", *c.exclMin, f)
	case c.exclMax != nil && f >= *c.exclMax:
		return fmt.Errorf("expected a number < %v, got %v", *c.exclMax, f)
	}
	return nil
}

func (c *constraints) checkItems(n int) error {
	if c.minItems >= 0 && n < c.minItems {
		return fmt.Errorf("expected at least %d items, got %d", c.minItems, n)
	}
	if c.maxItems >= 0 && n > c.maxItems {
		return fmt.Errorf("expected at most %d items, got %d", c.maxItems, n)
	}
	return nil
}

func toFloat(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int64:
		return float64(n)
	case int:
		return float64(n)
	case json.Number:
		f, _ := n.Float64()
		return f
	case string:
		f, err := strconv.ParseFloat(n, 64)
		if err == nil {
			return f
		}
	}
	return math.NaN()
}

func enumList(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		b, _ := json.Marshal(v)
		parts[i] = string(b)
	}
	return strings.Join(parts, ", ")
}

// scanner reads JSON text without building a tree.
type scanner struct {
	s string
	i int
}

// syntaxError is JSON that is not JSON.
type syntaxError struct {
	msg    string
	offset int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("arguments are not valid JSON: %s at offset %d", e.msg, e.offset)
}

func (sc *scanner) syntaxErr(msg string) error { return &syntaxError{msg: msg, offset: sc.i} }

// typeErr says what came where want was expected.
func (sc *scanner) typeErr(want string) error {
	sc.ws()
	got := "end of input"
	if sc.i < len(sc.s) {
		switch c := sc.s[sc.i]; {
		case c == '"':
			if raw, err := sc.skip(); err == nil {
				got = "string " + truncate(raw, 40)
			} else {
				got = "string"
			}
		case c == '{':
			got = "object"
		case c == '[':
			got = "array"
		case c == 't' || c == 'f':
			got = "boolean"
		case c == 'n':
			got = "null"
		case c == '-' || c >= '0' && c <= '9':
			j := sc.i + 1
			for j < len(sc.s) && strings.IndexByte("0123456789.eE+-", sc.s[j]) >= 0 {
				j++
			}
			got = "number " + sc.s[sc.i:j]
		default:
			return sc.syntaxErr(fmt.Sprintf("invalid character %q", c))
		}
	}
	return &typeError{want: want, got: got}
}

type typeError struct{ want, got string }

func (e *typeError) Error() string { return "expected " + e.want + ", got " + e.got }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func (sc *scanner) ws() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

func (sc *scanner) open(c byte) bool {
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

// close consumes the closing bracket c if it comes next; a trailing comma
// before it is a syntax error left to the caller.
func (sc *scanner) close(c byte) bool {
	sc.ws()
	if sc.i < len(sc.s) && sc.s[sc.i] == c {
		sc.i++
		return true
	}
	return false
}

func (sc *scanner) comma() bool { return sc.open(',') }
func (sc *scanner) colon() bool { return sc.open(':') }

func (sc *scanner) null() bool {
	sc.ws()
	if strings.HasPrefix(sc.s[sc.i:], "null") {
		sc.i += 4
		return true
	}
	return false
}

func (sc *scanner) boolean() (bool, error) {
	sc.ws()
	rest := sc.s[sc.i:]
	switch {
	case strings.HasPrefix(rest, "true"):
		sc.i += 4
		return true, nil
	case strings.HasPrefix(rest, "false"):
		sc.i += 5
		return false, nil
	}
	return false, sc.typeErr("boolean")
}

// str reads a string, unescaping it; without escapes it is a substring of
// the input and costs no allocation.
func (sc *scanner) str() (string, error) {
	sc.ws()
	if sc.i >= len(sc.s) || sc.s[sc.i] != '"' {
		return "", sc.typeErr("string")
	}
	start := sc.i + 1
	ascii := true
	for j := start; j < len(sc.s); j++ {
		c := sc.s[j]
		if c >= 0x20 && c < 0x80 && c != '"' && c != '\\' {
			continue
		}
		switch {
		case c >= 0x80:
			ascii = false
		case c == '"':
			sc.i = j + 1
			s := sc.s[start:j]
			if !ascii && !utf8.ValidString(s) {
				s = strings.ToValidUTF8(s, "\uFFFD")
			}
			return s, nil
		case c == '\\':
			return sc.unescape(start)
		case c < 0x20:
			sc.i = j
			return "", sc.syntaxErr("control character in string")
		}
	}
	sc.i = len(sc.s)
	return "", sc.syntaxErr("unterminated string")
}

func (sc *scanner) unescape(start int) (string, error) {
	var b strings.Builder
	j := start
	for j < len(sc.s) {
		c := sc.s[j]
		switch {
		case c == '"':
			sc.i = j + 1
			return strings.ToValidUTF8(b.String(), "\uFFFD"), nil
		case c < 0x20:
			sc.i = j
			return "", sc.syntaxErr("control character in string")
		case c != '\\':
			b.WriteByte(c)
			j++
			continue
		}
		if j+1 >= len(sc.s) {
			break
		}
		e := sc.s[j+1]
		j += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(sc.s, j)
			if !ok {
				sc.i = j
				return "", sc.syntaxErr(`bad \u escape`)
			}
			j += 4
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(sc.s, j+2); ok && strings.HasPrefix(sc.s[j:], `\u`) {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						j += 6
						r = dec
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
		default:
			sc.i = j - 1
			return "", sc.syntaxErr("bad escape in string")
		}
	}
	sc.i = len(sc.s)
	return "", sc.syntaxErr("unterminated string")
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s[i:i+4], 16, 32)
	return rune(n), err == nil
}

// numberText reads a JSON number literal.
func (sc *scanner) numberText(want string) (string, error) {
	sc.ws()
	start := sc.i
	j := start
	if j < len(sc.s) && sc.s[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(sc.s) && sc.s[j] >= '0' && sc.s[j] <= '9' {
			j++
		}
		return j - k
	}
	if j >= len(sc.s) || sc.s[j] < '0' || sc.s[j] > '9' {
		return "", sc.typeErr(want)
	}
	if sc.s[j] == '0' {
		j++
	} else {
		digits()
	}
	if j < len(sc.s) && sc.s[j] == '.' {
		j++
		if digits() == 0 {
			sc.i = j
			return "", sc.syntaxErr("bad number")
		}
	}
	if j < len(sc.s) && (sc.s[j] == 'e' || sc.s[j] == 'E') {
		j++
		if j < len(sc.s) && (sc.s[j] == '+' || sc.s[j] == '-') {
			j++
		}
		if digits() == 0 {
			sc.i = j
			return "", sc.syntaxErr("bad number")
		}
	}
	sc.i = j
	return sc.s[start:j], nil
}

func (sc *scanner) integer() (int64, error) {
	lit, err := sc.numberText("integer")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	if err == nil {
		return n, nil
	}
	// JSON Schema counts 5.0 as an integer.
	f, ferr := strconv.ParseFloat(lit, 64)
	if ferr != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, fmt.Errorf("expected integer, got number %s", lit)
	}
	return int64(f), nil
}

func (sc *scanner) number() (float64, error) {
	lit, err := sc.numberText("number")
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return 0, fmt.Errorf("expected number, got %s", lit)
	}
	return f, nil
}

// skip reads one JSON value of any kind and returns its text.
func (sc *scanner) skip() (string, error) {
	sc.ws()
	start := sc.i
	if sc.i >= len(sc.s) {
		return "", sc.syntaxErr("unexpected end of input")
	}
	switch c := sc.s[sc.i]; {
	case c == '"':
		if _, err := sc.str(); err != nil {
			return "", err
		}
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		sc.i++
		for n := 0; ; n++ {
			if sc.close(end) {
				break
			}
			if n > 0 && !sc.comma() {
				return "", sc.syntaxErr("expected , in " + map[byte]string{'}': "object", ']': "array"}[end])
			}
			if end == '}' {
				if _, err := sc.str(); err != nil {
					return "", err
				}
				if !sc.colon() {
					return "", sc.syntaxErr("expected : after object key")
				}
			}
			if _, err := sc.skip(); err != nil {
				return "", err
			}
		}
	case c == 't' || c == 'f':
		if _, err := sc.boolean(); err != nil {
			return "", err
		}
	case c == 'n':
		if !sc.null() {
			return "", sc.syntaxErr("invalid literal")
		}
	default:
		if _, err := sc.numberText("value"); err != nil {
			if _, ok := err.(*typeError); ok {
				return "", sc.syntaxErr(fmt.Sprintf("invalid character %q", c))
			}
			return "", err
		}
	}
	return sc.s[start:sc.i], nil
}

// end checks that nothing but white space follows the value.
func (sc *scanner) end() error {
	sc.ws()
	if sc.i < len(sc.s) {
		return sc.syntaxErr("unexpected text after the arguments object")
	}
	return nil
}
