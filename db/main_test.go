package db_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// pgx's pool health-check goroutines end with the pool; anything else left
	// running after the tests is a leak.
	goleak.VerifyTestMain(m)
}
