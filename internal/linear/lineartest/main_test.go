package lineartest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves goroutines behind, e.g. a handler
// still holding back a slow answer.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
