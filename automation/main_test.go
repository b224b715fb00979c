package automation_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests when a goroutine outlives them: a scheduler's
// loop or a fire that Close did not wait for.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
