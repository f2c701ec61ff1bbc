package slack_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any goroutine (a delivery, a socket, an HTTP
// connection) outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
