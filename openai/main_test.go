package openai

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain looks for goroutines left running once the tests pass: every
// test closes its server and the pool's idle connections.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
