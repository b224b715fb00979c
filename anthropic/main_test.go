package anthropic_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the tests and then looks for goroutines left running: a
// stream not closed, a connection not let go.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
