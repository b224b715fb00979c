package onion_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// regexp2 keeps a clock goroutine for about a second after a match
	// with a time limit (every pattern it matches has one), then ends it.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}
