package discord

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any goroutine (a gateway loop, a dispatcher
// lane, an HTTP connection) outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
