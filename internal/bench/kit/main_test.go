package kit

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves goroutines behind, such as a
// load generator's sender that never ended.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
