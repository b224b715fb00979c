package main

import (
	"os"
	"strings"

	"github.com/onionkit/onion/loop"

	// The providers onion's command speaks besides OpenAI's wires, named
	// by prefix: -model anthropic/claude-sonnet-4-5, gemini/gemini-2.5-flash.
	_ "github.com/onionkit/onion/anthropic"
	_ "github.com/onionkit/onion/gemini"
)

// providerModel reports whether the model the command runs with, name or
// else $ONION_MODEL, is a registered provider's other than OpenAI's
// ("anthropic/…", "gemini/…"): that provider then reads its own key and base URL, and the
// OpenAI settings are not needed.
func providerModel(name string) bool {
	if name == "" {
		name = os.Getenv("ONION_MODEL")
	}
	if strings.HasPrefix(name, "openai/") {
		return false
	}
	_, _, ok := loop.Lookup(name)
	return ok
}
