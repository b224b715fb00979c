package telemetry_test

import (
	"testing"

	"go.uber.org/goleak"
)

// OpenCensus, which package gemini's SDK pulls into the test binary,
// starts its worker at init.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"))
}
