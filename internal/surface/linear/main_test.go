package linear_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves goroutines behind: a pool, a
// fake server, or a handler still writing.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
