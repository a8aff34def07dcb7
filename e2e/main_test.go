package e2e

import (
	"os"
	"testing"

	"github.com/cnperf/cnperf/internal/testutil"
)

// TestMain removes the cnperf binary the tests built (testutil.Binary).
func TestMain(m *testing.M) { os.Exit(testutil.Main(m)) }
