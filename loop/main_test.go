package loop

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test of this package must leave no goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
