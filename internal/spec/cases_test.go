package spec_test

import (
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil/speccases"
)

// specCase is a spec document and what validating it says: "" when it is
// valid, else a substring of the one-line error.
type specCase = speccases.Case

// checkSpecCases parses and validates each case's document.
func checkSpecCases(t *testing.T, cases []specCase) {
	t.Helper()
	speccases.Check(t, spec.Spec.Validate, cases)
}
