// Package gemini is onion's provider for Google's Gemini models, on the
// Gemini Developer API (generativelanguage.googleapis.com), through the
// official client, google.golang.org/genai.
//
// Importing the package registers the prefix "gemini", the way a
// database/sql driver registers its name, so that an agent can name its
// model:
//
//	import _ "github.com/onionkit/onion/gemini"
//
//	agent, err := onion.NewAgent("helper", onion.Model("gemini/gemini-2.5-flash"), Weather)
//
// The key is $GEMINI_API_KEY (or $GOOGLE_API_KEY); $GEMINI_BASE_URL
// points the client at another server, such as oniontest's Gemini wire.
// New makes a Model with options of its own (thinking, an output cap, a
// client of the program's), for onion.WithModel.
//
// # What travels how
//
// The agent's instructions are the system instruction; its tools are
// function declarations, their schemas sent as parametersJsonSchema in
// the subset of JSON Schema Gemini takes (see CheckTools: what the subset
// cannot say is refused when the agent is made, naming the tool and the
// keyword). The calls of one reply are answered by one user content of
// function responses, in the order of the calls, each by its call's ID.
// A model content is kept as the parts the API wrote (Message.Items,
// ItemsFrom "gemini") and sent back unchanged, thought signatures
// included, as Gemini 3 requires; everything else is rebuilt from the
// messages the same way every time, so that the requests of a run share
// a byte-identical prefix and Gemini's implicit cache serves it (Usage.
// CachedTokens reports what it served).
//
// Images in a prompt go as inline data, or as file data when given by
// URL (the API fetches https and gs:// URLs itself). Images a tool
// returned go inside its function response on Gemini 3, and after the
// function responses of the turn on earlier models, as the API documents
// each.
//
// A typed answer (onion.Ask) is asked for with responseMimeType
// application/json and responseJsonSchema; before Gemini 3 a request
// with functions cannot ask for it, and the schema is then written into
// the system instruction instead.
//
// A failed request is a *loop.ModelError: RESOURCE_EXHAUSTED (429),
// UNAVAILABLE (503) and other server errors are retryable, with the
// delay of the error's RetryInfo or the Retry-After header; an invalid
// request is not. Errors name the API and the URL, never the key.
package gemini
