package onion_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The module TestBinaryWithoutSource builds: a library package of tools, a
// package main with tools of its own, and a package whose name ends like
// "main" does.
var shopFiles = map[string]string{
	"shop/shop.go": `// Package shop holds the refund tools.
package shop

import "context"

//go:generate go run github.com/onionkit/onion/cmd/oniondoc

// Reason says why an order is paid back.
type Reason string

const (
	Damaged Reason = "damaged"
	Late    Reason = "late"
)

// RefundArgs is what Refund and Remove take.
type RefundArgs struct {
	// Order is the order to pay back.
	Order  string ` + "`json:\"order\"`" + `
	Reason Reason ` + "`json:\"reason\"`" + `
}

// Refund pays an order back.
//
//onion:intent delete
//onion:approve
func Refund(ctx context.Context, a RefundArgs) error { return nil }

// Store is a shop's stock.
type Store struct{}

// Remove takes an order's items out of the stock.
//
//onion:intent delete
//onion:approve
func (s *Store) Remove(ctx context.Context, a RefundArgs) error { return nil }
`,
	"domain/domain.go": `// Package domain's name ends with "main".
package domain

// Item is a thing sold.
type Item struct{ Name string }
`,
	"main.go": `// Command shop reports, as JSON, the tools it makes or why it cannot.
package main

//go:generate go run github.com/onionkit/onion/cmd/oniondoc

import (
	"context"
	"encoding/json"
	"os"

	"example.com/shop/domain"
	"example.com/shop/shop"
	"github.com/onionkit/onion"
)

// Query names an item.
type Query struct {
	Name string ` + "`json:\"name\"`" + `
}

// Cancel cancels an order.
//
//onion:approve
func Cancel(ctx context.Context, q Query) error { return nil }

// Lookup finds an item.
func Lookup(ctx context.Context, q Query) (domain.Item, error) { return domain.Item{}, nil }

type tool struct {
	Description, Intent, Signature, Schema string
	Approval                               bool
}

func main() {
	errs := map[string]string{}
	tools := map[string]tool{}
	add := func(name string, ts []*onion.Tool, err error) {
		if err != nil {
			errs[name] = err.Error()
			return
		}
		for _, t := range ts {
			tools[name+"/"+t.Name()] = tool{t.Description(), string(t.Intent()), t.Signature(), string(t.Schema()),
				t.NeedsApproval(context.Background(), onion.Call{})}
		}
	}
	agent := func(name string, item any) {
		a, err := onion.NewAgent("shop", item)
		if err != nil {
			add(name, nil, err)
			return
		}
		add(name, a.Tools().All(), nil)
	}
	agent("refund", shop.Refund)
	agent("store", &shop.Store{})
	agent("cancel", Cancel)
	t, err := onion.NewTool(Lookup, onion.Description("Look an item up."), onion.Read, onion.NoApproval())
	add("lookup", []*onion.Tool{t}, err)
	ts, err := onion.ToolsFrom(&shop.Store{}, onion.Method("Remove", onion.Description("Remove stock."), onion.Delete, onion.RequireApproval()))
	add("store_said", ts, err)
	json.NewEncoder(os.Stdout).Encode(map[string]any{"errors": errs, "tools": tools})
}
`,
}

type shopReport struct {
	Errors map[string]string
	Tools  map[string]struct {
		Description, Intent, Signature, Schema string
		Approval                               bool
	}
}

// TestBinaryWithoutSource builds a program the way it is shipped and runs it
// where its source is not: without generated facts, a tool whose doc
// comment cannot be read is refused (its //onion:approve would be lost),
// unless options say everything; with facts from go generate, intent and
// approval survive; where the source is at hand, an edited doc comment wins
// over the stale facts, and oniondoc -check fails on them.
func TestBinaryWithoutSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three binaries")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	onionDir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	mod := filepath.Join(work, "shop")
	files := map[string]string{
		"go.mod": "module example.com/shop\n\ngo 1.26\n\nrequire github.com/onionkit/onion v0.0.0\n\n" +
			"replace github.com/onionkit/onion => " + onionDir + "\n",
		"go.sum": string(sum),
	}
	for name, src := range shopFiles {
		files[name] = src
	}
	writeTree(t, mod, files)
	elsewhere := filepath.Join(work, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off") // everything needed is local
	t.Setenv("GOWORK", "off")

	bin := filepath.Join(work, "bin")
	run(t, mod, "go", "build", "-o", filepath.Join(bin, "plain"), ".")
	run(t, mod, "go", "build", "-trimpath", "-o", filepath.Join(bin, "bare"), ".")
	run(t, mod, "go", "generate", "./...")
	run(t, mod, "go", "build", "-trimpath", "-o", filepath.Join(bin, "generated"), ".")

	t.Run("no source, no facts", func(t *testing.T) {
		r := report(t, elsewhere, filepath.Join(bin, "bare"))
		t.Logf("errors: %q", r.Errors)
		for _, name := range []string{"refund", "store", "cancel"} {
			msg := r.Errors[name]
			for _, want := range []string{"doc comment cannot be read", "cmd/oniondoc", "onion.Description", "an intent", "onion.RequireApproval"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%s: err = %q\nwant it to contain %q", name, msg, want)
				}
			}
		}
		if !strings.Contains(r.Errors["store"], `onion.Method("Remove"`) {
			t.Errorf("store: err = %q, want it to name onion.Method", r.Errors["store"])
		}
		// Options that say everything need no source.
		lookup, ok := r.Tools["lookup/lookup"]
		if !ok || lookup.Description != "Look an item up." || lookup.Intent != "read" || lookup.Approval {
			t.Errorf("lookup: %+v (err %q)", lookup, r.Errors["lookup"])
		}
		if want := "lookup(args Query) domain.Item"; lookup.Signature != want {
			t.Errorf("lookup: Signature = %q, want %q", lookup.Signature, want)
		}
		if remove := r.Tools["store_said/remove"]; remove.Intent != "delete" || !remove.Approval {
			t.Errorf("store_said: %+v (err %q)", r.Tools, r.Errors["store_said"])
		}
	})

	t.Run("generated facts", func(t *testing.T) {
		r := report(t, elsewhere, filepath.Join(bin, "generated"))
		if len(r.Errors) > 0 {
			t.Fatalf("errors: %q", r.Errors)
		}
		for _, key := range []string{"refund/refund", "store/remove"} {
			tool := r.Tools[key]
			if tool.Intent != "delete" || !tool.Approval || !strings.Contains(tool.Schema, `"enum":["damaged","late"]`) ||
				!strings.Contains(tool.Schema, "Order is the order to pay back.") {
				t.Errorf("%s: %+v", key, tool)
			}
		}
		if d := r.Tools["refund/refund"].Description; d != "Pays an order back." {
			t.Errorf("refund: description %q", d)
		}
		if c := r.Tools["cancel/cancel"]; !c.Approval || c.Description != "Cancels an order." {
			t.Errorf("cancel: %+v", c)
		}
		if s := r.Tools["lookup/lookup"].Signature; s != "lookup(q Query) domain.Item" {
			t.Errorf("lookup: Signature = %q", s)
		}
	})

	// Edit a doc comment after go generate: the facts are now stale.
	shopGo := filepath.Join(mod, "shop", "shop.go")
	edited := strings.Replace(shopFiles["shop/shop.go"], "// Refund pays an order back.", "// Refund returns the money paid for an order.", 1)
	if err := os.WriteFile(shopGo, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("edited source wins", func(t *testing.T) {
		// Run in the module, the binary finds the source of package shop.
		r := report(t, mod, filepath.Join(bin, "generated"))
		if d := r.Tools["refund/refund"].Description; d != "Returns the money paid for an order." {
			t.Errorf("refund: description %q, want the edited one (errors %q)", d, r.Errors)
		}
		if tool := r.Tools["refund/refund"]; tool.Intent != "delete" || !tool.Approval {
			t.Errorf("refund: %+v", tool)
		}
	})

	t.Run("oniondoc -check", func(t *testing.T) {
		cmd := exec.Command("go", "run", "github.com/onionkit/onion/cmd/oniondoc", "-check")
		cmd.Dir = filepath.Join(mod, "shop")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "stale") || !strings.Contains(string(out), "changed: func Refund") {
			t.Errorf("oniondoc -check on the stale file: err %v, output:\n%s", err, out)
		}
	})

	t.Run("source moved away", func(t *testing.T) {
		if err := os.Rename(mod, mod+".moved"); err != nil {
			t.Fatal(err)
		}
		r := report(t, elsewhere, filepath.Join(bin, "plain"))
		t.Logf("errors: %q", r.Errors)
		msg := r.Errors["cancel"]
		for _, want := range []string{"read the source of main.Cancel", "no such file or directory", "cmd/oniondoc", "onion.RequireApproval"} {
			if !strings.Contains(msg, want) {
				t.Errorf("cancel: err = %q\nwant it to contain %q", msg, want)
			}
		}
		if !strings.Contains(r.Errors["refund"], "cmd/oniondoc") {
			t.Errorf("refund: err = %q", r.Errors["refund"])
		}
	})
}

// report runs the shop program bin in dir and decodes what it prints.
func report(t *testing.T, dir, bin string) shopReport {
	t.Helper()
	out := run(t, dir, bin)
	var r shopReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	return r
}

func run(t *testing.T, dir, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
