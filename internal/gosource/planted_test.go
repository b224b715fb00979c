package gosource

import (
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
