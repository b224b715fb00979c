package temporal

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the tests when a goroutine outlives them: the heartbeat
// timer of an activity, a tool abandoned on the way.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
