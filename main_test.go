package onion_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests, then the scripted ones again on the Responses
// API (rerunOnResponsesAPI), then looks for goroutines left running.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		code = rerunOnResponsesAPI()
	}
	if code == 0 {
		// regexp2 keeps a clock goroutine for about a second after a
		// match with a time limit (every pattern it matches has one),
		// then ends it.
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"),
			// OpenCensus, which package gemini's SDK pulls in, starts its worker at init.
			goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
