// Package speccases checks spec documents against what refuses them: the
// spec's own checks, or a driver's of its section.
package speccases

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/spec"
)

// Case is a case's name, a spec document, and what checking it says: ""
// when it is valid, else a substring of the one-line error. An array, so
// that tables of cases list them as they read.
type Case [3]string

// Check parses each case's document (the spec's own fields) and has check
// refuse it, or not.
func Check(t *testing.T, check func(spec.Spec) error, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		name, doc, want := tc[0], tc[1], tc[2]
		t.Run(name, func(t *testing.T) {
			s, err := spec.Parse(strings.NewReader(doc), "x.yaml")
			if err == nil {
				err = check(s)
			}
			switch {
			case want == "" && err != nil:
				t.Fatalf("valid spec refused: %v", err)
			case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
				t.Fatalf("err = %v, want one containing %q", err, want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}
