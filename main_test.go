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
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
