// Command oniondoc writes what a package's Go source says about its funcs
// and types — doc comments, parameter names, field docs, enum values — into
// a Go file that registers those facts with package srcdoc at init. A binary
// built from the package then describes its tools to the model even where
// the source is not around.
//
// Run it from a go:generate directive in the package:
//
//	//go:generate go run github.com/onionkit/onion/cmd/oniondoc
//
// It writes oniondoc_gen.go into the package directory, covering every func,
// method and named type of the package's non-test files. For each exported
// func and method with a tool's shape it also writes a srcdoc.Call, which
// runs it with no reflection (calls.go). Flags:
//
//	-o name   the output file, relative to the package directory (default oniondoc_gen.go)
//	-dir dir  the package directory (default ".", where go generate runs it)
//	-check    write nothing; exit with status 1, naming the funcs and types
//	          whose facts differ, when the output file is not what the
//	          source gives now (for CI: a stale file misleads binaries run
//	          without their source)
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"go/token"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/onionkit/onion/internal/gosource"
	"github.com/onionkit/onion/srcdoc"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("oniondoc: ")
	out := flag.String("o", "oniondoc_gen.go", "output file, relative to the package directory")
	dir := flag.String("dir", ".", "package directory")
	checkOnly := flag.Bool("check", false, "report a stale output file instead of writing it")
	flag.Parse()
	if flag.NArg() > 0 {
		log.Fatalf("unexpected arguments %q; use -dir, -o and -check", flag.Args())
	}
	if !*checkOnly {
		if err := generate(*dir, *out); err != nil {
			log.Fatal(err)
		}
		return
	}
	diffs, err := check(*dir, *out)
	if err != nil {
		log.Fatal(err)
	}
	if len(diffs) > 0 {
		log.Printf("%s is stale: run go generate in %s (or oniondoc there); it differs from the source in:", outPath(*dir, *out), *dir)
		for _, d := range diffs {
			log.Print("  " + d)
		}
		os.Exit(1)
	}
}

// generate writes the facts of the package in dir to the file out.
func generate(dir, out string) error {
	src, err := facts(dir)
	if err != nil {
		return err
	}
	if err := os.WriteFile(outPath(dir, out), src, 0o644); err != nil {
		return fmt.Errorf("write facts: %w", err)
	}
	return nil
}

// facts renders the facts of the package in dir as the output file holds
// them.
func facts(dir string) ([]byte, error) {
	name, path, err := goList(dir)
	if err != nil {
		return nil, err
	}
	pkg, err := gosource.ParseDir(dir, name, false)
	if err != nil {
		return nil, err
	}
	pkg.Path = path
	calls, imports, err := genCalls(dir, name)
	if err != nil {
		return nil, err
	}
	return render(name, pkg, calls, imports)
}

// outPath is the output file out of the package in dir.
func outPath(dir, out string) string {
	if filepath.IsAbs(out) {
		return out
	}
	return filepath.Join(dir, out)
}

// goList returns the name and import path of the package in dir as the go
// command sees it; the import path of a main package is "main", as reflect
// and the runtime report it.
func goList(dir string) (name, path string, err error) {
	cmd := exec.Command("go", "list", "-e", "-f", "{{.Name}}\n{{.ImportPath}}")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		return "", "", fmt.Errorf("go list in %s: %w: %s", dir, err, bytes.TrimSpace(stderr.Bytes()))
	}
	name, path, _ = strings.Cut(strings.TrimRight(string(outb), "\n"), "\n")
	if name == "" {
		// go list names no package when, for one, no file parses; the go
		// generate environment still knows the name.
		name = strings.TrimSuffix(os.Getenv("GOPACKAGE"), "_test")
	}
	if !token.IsIdentifier(name) {
		return "", "", errors.New("no Go package in " + dir)
	}
	if name == "main" {
		path = "main"
	}
	return name, path, nil
}

// render writes the Go file registering pkg, formatted, with the Call of
// each func in calls (by name) and the imports they need.
func render(pkgName string, pkg srcdoc.Package, calls map[string]string, imports []string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\npackage %s\n\n", gosource.GeneratedHeader, pkgName)
	if len(imports) == 0 {
		imports = []string{`"github.com/onionkit/onion/srcdoc"`}
	}
	b.WriteString("import (\n" + strings.Join(imports, "\n") + "\n)\n\n")
	b.WriteString("func init() {\nsrcdoc.Register(srcdoc.Package{\n")
	fmt.Fprintf(&b, "Path: %q,\n", pkg.Path)
	if len(pkg.Funcs) > 0 {
		b.WriteString("Funcs: []srcdoc.Func{\n")
		for _, f := range pkg.Funcs {
			fmt.Fprintf(&b, "{Name: %q", f.Name)
			strs(&b, "Doc", f.Doc)
			strs(&b, "Params", f.Params)
			if c, ok := calls[f.Name]; ok {
				b.WriteString(", Call: " + c)
			}
			b.WriteString("},\n")
		}
		b.WriteString("},\n")
	}
	if len(pkg.Types) > 0 {
		b.WriteString("Types: []srcdoc.Type{\n")
		for _, t := range pkg.Types {
			fmt.Fprintf(&b, "{Name: %q", t.Name)
			strs(&b, "Doc", t.Doc)
			if len(t.Fields) > 0 {
				b.WriteString(", Fields: []srcdoc.Field{\n")
				for _, f := range t.Fields {
					fmt.Fprintf(&b, "{Name: %q", f.Name)
					strs(&b, "Doc", f.Doc)
					b.WriteString("},\n")
				}
				b.WriteString("}")
			}
			strs(&b, "Enum", t.Enum)
			b.WriteString("},\n")
		}
		b.WriteString("},\n")
	}
	b.WriteString("})\n}\n")
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("format generated code: %w", err)
	}
	return src, nil
}

// strs writes `, field: []string{"a", "b"}`, or nothing for an empty list:
// the reader never produces empty non-nil lists, so the registered facts
// equal what ParseDir returns.
func strs(b *bytes.Buffer, field string, list []string) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(b, ", %s: []string{", field)
	for i, s := range list {
		if i > 0 {
			b.WriteString(", ")
		}
		if strings.Contains(s, `"`) && !strings.Contains(s, "\t") && strconv.CanBackquote(s) {
			b.WriteString("`" + s + "`") // `"low"` reads better than "\"low\""
		} else {
			b.WriteString(strconv.Quote(s))
		}
	}
	b.WriteString("}")
}
