package spec_test

import (
	"strings"
	"testing"
)

// specCase is a spec document and what validating it says: "" when it is
// valid, else a substring of the one-line error.
type specCase struct {
	name string
	doc  string
	want string
}

// checkSpecCases parses and validates each case's document.
func checkSpecCases(t *testing.T, cases []specCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parse(tc.doc)
			if err == nil {
				err = s.Validate()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("valid spec refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}
