package gosource_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/onionkit/onion/internal/gosource"
)

// TestEnums evaluates the constants of type T declared in decls.
func TestEnums(t *testing.T) {
	tests := []struct {
		name  string
		decls string
		want  []string
	}{
		{"iota", "type T int\nconst (\n\tA T = iota\n\tB\n\tC\n)", []string{"0", "1", "2"}},
		{"iota plus one", "type T int\nconst (\n\tA T = iota + 1\n\tB\n\t_\n\tD\n)", []string{"1", "2", "4"}},
		{"shift", "type T uint\nconst (\n\tA T = 1 << iota\n\tB\n\tC\n)", []string{"1", "2", "4"}},
		{"kilobytes", "type T int64\nconst (\n\t_ = iota\n\tKB T = 1 << (10 * iota)\n\tMB\n)", []string{"1024", "1048576"}},
		{"strings", "type T string\nconst (\n\tA T = \"low\"\n\tB T = `raw \\n`\n\tC T = \"esc\\t\\u00e9<\"\n)", []string{`"low"`, `"raw \\n"`, `"esc\té<"`}},
		{"conversion", "type T string\nconst (\n\tA = T(\"a\")\n\tB = T(\"b\" + \"c\")\n)", []string{`"a"`, `"bc"`}},
		{"typed by operand", "type T int\nconst (\n\tA = T(1) << iota\n\tB\n)", []string{"1", "2"}},
		{"references", "type T int\nconst (\n\tA T = base + 1\n\tB = A * 2\n)\nconst base = 40", []string{"41", "82"}},
		{"underlying chain", "type S string\ntype T S\nconst A T = \"x\"", []string{`"x"`}},
		{"integer division", "type T float64\nconst (\n\tA T = 7 / 2\n\tB T = A / 2\n)", []string{"3", "1.5"}},
		{"rune to string", "type T string\nconst A = T(65)", []string{`"A"`}},
		{"unsigned complement", "type T uint8\nconst A T = ^T(0)", []string{"255"}},
		{"bool", "type T bool\nconst (\n\tYes T = true\n\tNo T = !Yes\n)", []string{"true", "false"}},
		{"several per line", "type T int\nconst (\n\tA, B T = iota, iota + 10\n\tC, D\n)", []string{"0", "10", "1", "11"}},
		{"skip what cannot be known", "import \"strconv\"\ntype T int\nconst (\n\tA T = strconv.IntSize\n\tB T = 2\n\tC T = unknown\n)", []string{"2"}},
		{"other types apart", "type T int\ntype U int\nconst (\n\tA T = 1\n\tB U = 2\n\tC = 3\n)", []string{"1"}},
		{"untyped only", "type T int\nconst A = 1", nil},
		{"cycle", "type T int\nconst (\n\tA T = B\n\tB T = A\n)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			src := "package p\n\n" + tt.decls + "\n"
			if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			pkg, err := gosource.ParseDir(dir, "p", false)
			if err != nil {
				t.Fatal(err)
			}
			typ, ok := findType(pkg, "T")
			if !ok {
				t.Fatal("type T missing")
			}
			if !reflect.DeepEqual(typ.Enum, tt.want) {
				t.Errorf("Enum = %q, want %q\n%s", typ.Enum, tt.want, src)
			}
		})
	}
}
