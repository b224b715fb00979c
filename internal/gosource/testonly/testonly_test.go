// Package testonly is made only of _test.go files, as a package whose
// tools are declared in its tests: the names of its constants must reach
// the schema of a tool that takes its enum type.
package testonly

import (
	"strings"
	"testing"

	"github.com/onionkit/onion"
)

// Shade is a shade of grey.
type Shade string

// The shades.
const (
	Light Shade = "light"
	Dark  Shade = "dark"
)

// Paint paints the wall.
//
// shade: the shade to paint
//
//onion:intent write
func Paint(shade Shade) string { return "painted " + string(shade) }

// TestEnumOfATestOnlyPackage: the enum of a type declared in a package
// made only of _test.go files is found, so the schema lists its values.
func TestEnumOfATestOnlyPackage(t *testing.T) {
	tool, err := onion.NewTool(Paint)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(tool.Schema()); !strings.Contains(s, `"enum":["light","dark"]`) {
		t.Errorf("schema %s, want the enum of Shade", s)
	}
	if tool.Description() != "Paints the wall." {
		t.Errorf("description %q", tool.Description())
	}
}
