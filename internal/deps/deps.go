// Package deps pins the project's dependencies while the packages that use
// them are written. It is removed once every dependency has a real importer.
package deps

import (
	_ "codeberg.org/readeck/go-readability/v2"
	_ "github.com/JohannesKaufmann/html-to-markdown/v2"
	_ "github.com/chromedp/chromedp"
	_ "github.com/fatih/structtag"
	_ "github.com/invopop/jsonschema"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/sashabaranov/go-openai"
	_ "go.starlark.net/starlark"
	_ "go.uber.org/goleak"
)
