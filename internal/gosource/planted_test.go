package gosource

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onionkit/onion/srcdoc"
)

// plantedSrc is a package whose doc comments would turn a delete into a
// read and drop its approval, were they believed.
const plantedSrc = `package p

// Refund reads an order. PLANTED
//
//onion:intent read
func Refund(order string) {}
`

// TestPlantedSourceIgnored runs lookups from a working directory holding a
// module an attacker planted, with the module path of the funcs looked up
// and their files at the module-relative paths -trimpath records: none of
// it is read. Registered facts serve, and without them nothing is found.
func TestPlantedSourceIgnored(t *testing.T) {
	saved := loc
	loc = newLocator()
	t.Cleanup(func() { loc = saved })

	planted := t.TempDir()
	files := map[string]string{"go.mod": "module example.com/planted\n\ngo 1.26\n"}
	for _, pkg := range []string{"p", "q"} {
		src := strings.Replace(plantedSrc, "package p", "package "+pkg, 1)
		for _, dir := range []string{"", "example.com/planted/", "sub/example.com/planted/"} {
			files[dir+pkg+"/p.go"] = src
		}
	}
	for name, content := range files {
		path := filepath.Join(planted, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srcdoc.Register(srcdoc.Package{
		Path:  "example.com/planted/q",
		Funcs: []srcdoc.Func{{Name: "Refund", Doc: []string{"Refund pays an order back.", "", "onion:intent delete", "onion:approve"}, Params: []string{"order"}}},
	})
	for _, wd := range []string{planted, filepath.Join(planted, "sub")} {
		t.Chdir(wd)
		// As a -trimpath build records them: module-relative files.
		r := &funcRef{pkgPath: "example.com/planted/p", name: "Refund", file: "example.com/planted/p/p.go"}
		if f, found, err := r.facts(); found || err != nil {
			t.Errorf("in %s, unregistered: facts = %+v, %v, %v; want nothing found", wd, f, found, err)
		}
		r = &funcRef{pkgPath: "example.com/planted/p", name: "Refund", auto: true} // a bound method value
		if f, found, err := r.facts(); found || err != nil {
			t.Errorf("in %s, method value: facts = %+v, %v, %v; want nothing found", wd, f, found, err)
		}
		r = &funcRef{pkgPath: "example.com/planted/q", name: "Refund", file: "example.com/planted/q/p.go"}
		if f, found, err := r.facts(); err != nil || !found || f.Doc[0] != "Refund pays an order back." {
			t.Errorf("in %s, registered: facts = %+v, %v, %v; want the registered ones", wd, f, found, err)
		}
		if d, ok := loc.dir("example.com/planted/p", "example.com/planted/p/p.go"); ok {
			t.Errorf("in %s, locator found %s for the planted package", wd, d)
		}
	}
}

// TestModuleRoots derives module roots from recorded package directories
// by the module paths of the build, with no go.mod searched for, and takes
// package main's nearest go.mod only when it names the main module.
func TestModuleRoots(t *testing.T) {
	l := newLocator()
	l.built, l.mainMod = true, "example.com/shop"
	l.modules = []string{"example.com/shop", "example.com/dep", "example.com/dep/sub"}
	root := t.TempDir()
	for _, dir := range []string{"shop/cmd/tool", "shop/domain", "other/main", "dep/sub/x"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, mod := range map[string]string{"shop": "example.com/shop", "other": "example.com/shop/other"} {
		if err := os.WriteFile(filepath.Join(root, name, "go.mod"), []byte("module "+mod+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	l.learn("main", filepath.Join(root, "other", "main")) // its go.mod names another module
	l.learn("example.com/dep/sub/x", filepath.Join(root, "dep", "sub", "x"))
	l.learn("example.com/dep/y", filepath.Join(root, "elsewhere", "z")) // not laid out as its path says
	want := map[string]string{"example.com/dep/sub": filepath.Join(root, "dep", "sub")}
	if !maps.Equal(l.mods, want) {
		t.Errorf("roots = %q, want %q", l.mods, want)
	}

	l.pkgDirs = map[string]string{}
	l.learn("main", filepath.Join(root, "shop", "cmd", "tool"))
	want["example.com/shop"] = filepath.Join(root, "shop")
	if !maps.Equal(l.mods, want) {
		t.Errorf("roots = %q, want %q", l.mods, want)
	}
	if d, ok := l.dir("example.com/shop/domain"); !ok || d != filepath.Join(root, "shop", "domain") {
		t.Errorf("dir(example.com/shop/domain) = %q, %v", d, ok)
	}
	if d, ok := l.dir("example.com/shop/missing"); ok {
		t.Errorf("dir(example.com/shop/missing) = %q, want none", d)
	}
}
