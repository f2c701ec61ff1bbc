package github_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if a test leaves goroutines behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
