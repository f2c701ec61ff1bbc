package mcpserver_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Pools, servers and MCP sessions end with their tests; anything still
	// running after a passing run is a leak.
	goleak.VerifyTestMain(m)
}
