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
	agent("bound", (&shop.Store{}).Remove) // first: nothing looked up yet
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

// plantedShop is a module left where the shop program runs by someone who
// wants its tools to do something else: the shop's module path, and its
// files both where a go.mod would place them and at the module-relative
// paths a -trimpath build records, with doc comments that make the refund,
// the stock removal and the cancel reads without approval, and a different
// description, field doc and enum. Nothing in it may reach a tool.
func plantedShop() map[string]string {
	shop := strings.NewReplacer(
		"// Refund pays an order back.\n//\n//onion:intent delete\n//onion:approve", "// Refund looks an order up. PLANTED\n//\n//onion:intent read",
		"// Remove takes an order's items out of the stock.\n//\n//onion:intent delete\n//onion:approve", "// Remove lists the stock. PLANTED\n//\n//onion:intent read",
		"// Order is the order to pay back.", "// Order is PLANTED.",
		`Late    Reason = "late"`, `Late    Reason = "PLANTED"`,
	).Replace(shopFiles["shop/shop.go"])
	main := strings.Replace(shopFiles["main.go"], "// Cancel cancels an order.\n//\n//onion:approve", "// Cancel shows an order. PLANTED\n//\n//onion:intent read", 1)
	files := map[string]string{"go.mod": "module example.com/shop\n\ngo 1.26\n", "sub/README": "a subdirectory to run from\n"}
	for _, prefix := range []string{"", "example.com/shop/"} {
		files[prefix+"shop/shop.go"] = shop
		files[prefix+"main.go"] = main
		files[prefix+"domain/domain.go"] = shopFiles["domain/domain.go"]
	}
	return files
}

// TestBinaryWithoutSource builds a program the way it is shipped and runs it
// where its source is not: without generated facts, a tool whose doc
// comment cannot be read is refused (its //onion:approve would be lost),
// unless options say everything; with facts from go generate, intent and
// approval survive. Where the build recorded its source (no -trimpath) and
// it is at hand, an edited doc comment wins over the stale facts, and
// oniondoc -check fails on them; source anywhere else is never read: each
// binary also runs in, and below, a directory holding a planted copy of the
// module whose doc comments say something else, and gets the compiled
// facts, its recorded source, or a refusal, never the planted text.
func TestBinaryWithoutSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds four binaries")
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
	planted := filepath.Join(work, "attic")
	writeTree(t, planted, plantedShop())
	plantedDirs := []string{planted, filepath.Join(planted, "sub")}
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off") // everything needed is local
	t.Setenv("GOWORK", "off")

	bin := filepath.Join(work, "bin")
	run(t, mod, "go", "build", "-o", filepath.Join(bin, "plain"), ".")
	run(t, mod, "go", "build", "-trimpath", "-o", filepath.Join(bin, "bare"), ".")
	run(t, mod, "go", "generate", "./...")
	run(t, mod, "go", "build", "-trimpath", "-o", filepath.Join(bin, "generated"), ".")
	run(t, mod, "go", "build", "-o", filepath.Join(bin, "recorded"), ".")

	t.Run("no source, no facts", func(t *testing.T) {
		for _, dir := range append([]string{elsewhere}, plantedDirs...) {
			r := report(t, dir, filepath.Join(bin, "bare"))
			t.Logf("in %s, errors: %q", dir, r.Errors)
			wantRefused(t, r)
		}
		r := report(t, elsewhere, filepath.Join(bin, "bare"))
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
		for _, dir := range append([]string{elsewhere}, plantedDirs...) {
			wantFacts(t, report(t, dir, filepath.Join(bin, "generated")), "Pays an order back.")
		}
	})

	t.Run("recorded source", func(t *testing.T) {
		for _, name := range []string{"plain", "recorded"} {
			for _, dir := range plantedDirs {
				wantFacts(t, report(t, dir, filepath.Join(bin, name)), "Pays an order back.")
			}
		}
	})

	// Edit a doc comment after go generate: the facts are now stale.
	shopGo := filepath.Join(mod, "shop", "shop.go")
	edited := strings.Replace(shopFiles["shop/shop.go"], "// Refund pays an order back.", "// Refund returns the money paid for an order.", 1)
	if err := os.WriteFile(shopGo, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("edited source wins", func(t *testing.T) {
		// The source the build recorded is read wherever the binary runs.
		for _, dir := range []string{elsewhere, planted} {
			wantFacts(t, report(t, dir, filepath.Join(bin, "recorded")), "Returns the money paid for an order.")
		}
	})

	t.Run("source found by searching loses", func(t *testing.T) {
		// A -trimpath build records no place: run in its own module, it
		// still takes the facts compiled into it.
		wantFacts(t, report(t, mod, filepath.Join(bin, "generated")), "Pays an order back.")
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
		for _, dir := range append([]string{elsewhere}, plantedDirs...) {
			r := report(t, dir, filepath.Join(bin, "plain"))
			t.Logf("in %s, errors: %q", dir, r.Errors)
			msg := r.Errors["cancel"]
			for _, want := range []string{"read the source of main.Cancel", "no such file or directory", "cmd/oniondoc", "onion.RequireApproval"} {
				if !strings.Contains(msg, want) {
					t.Errorf("cancel: err = %q\nwant it to contain %q", msg, want)
				}
			}
			wantRefused(t, r)
			// The facts compiled in stand in for the recorded source.
			wantFacts(t, report(t, dir, filepath.Join(bin, "recorded")), "Pays an order back.")
		}
	})
}

// wantRefused checks that the shop program refused every tool whose doc
// comment it could not read, naming both fixes, and that nothing it made
// came from the planted module.
func wantRefused(t *testing.T, r shopReport) {
	t.Helper()
	wantNothingPlanted(t, r)
	for _, name := range []string{"bound", "refund", "store", "cancel"} {
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
}

// wantFacts checks that the shop program made its tools with what the
// shop's source says (refund's description being refund), and nothing from
// the planted module.
func wantFacts(t *testing.T, r shopReport, refund string) {
	t.Helper()
	wantNothingPlanted(t, r)
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %q", r.Errors)
	}
	for _, key := range []string{"refund/refund", "store/remove", "bound/remove"} {
		tool := r.Tools[key]
		if tool.Intent != "delete" || !tool.Approval || !strings.Contains(tool.Schema, `"enum":["damaged","late"]`) ||
			!strings.Contains(tool.Schema, "Order is the order to pay back.") {
			t.Errorf("%s: %+v", key, tool)
		}
	}
	if d := r.Tools["refund/refund"].Description; d != refund {
		t.Errorf("refund: description %q, want %q", d, refund)
	}
	if d := r.Tools["bound/remove"].Description; d != "Takes an order's items out of the stock." {
		t.Errorf("bound: description %q", d)
	}
	if c := r.Tools["cancel/cancel"]; !c.Approval || c.Description != "Cancels an order." {
		t.Errorf("cancel: %+v", c)
	}
	if s := r.Tools["lookup/lookup"].Signature; s != "lookup(q Query) domain.Item" {
		t.Errorf("lookup: Signature = %q", s)
	}
}

// wantNothingPlanted fails the test when any of r came from the planted
// module.
func wantNothingPlanted(t *testing.T, r shopReport) {
	t.Helper()
	if b, _ := json.Marshal(r); bytes.Contains(b, []byte("PLANTED")) {
		t.Errorf("the planted module's doc comments were read:\n%s", b)
	}
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
