// Package version reports the onion module's version, which both MCP bridges
// announce as their implementation version during initialize.
package version

import "runtime/debug"

const modulePath = "github.com/onionkit/onion"

// Onion returns the version of the onion module linked into the binary, such
// as "v0.3.1", or "devel" when it is not known (a build inside the module's
// own tree, or a binary without build information).
func Onion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if bi.Main.Path == modulePath {
		return orDevel(bi.Main.Version)
	}
	for _, d := range bi.Deps {
		if d.Path == modulePath {
			if d.Replace != nil {
				return orDevel(d.Replace.Version)
			}
			return orDevel(d.Version)
		}
	}
	return "devel"
}

func orDevel(v string) string {
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
}
