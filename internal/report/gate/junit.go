package gate

import (
	"encoding/xml"
	"fmt"
	"io"
)

// JUnit XML for CI systems: one testcase per result. A broken limit is a
// failure; a limit the run cannot tell is skipped with the reason, so that
// CI shows it without calling it a regression (the exit code, 3, still
// says the run could not decide).
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Class   string        `xml:"classname,attr"`
	Name    string        `xml:"name,attr"`
	Failure *junitMessage `xml:"failure,omitempty"`
	Skipped *junitMessage `xml:"skipped,omitempty"`
	Output  string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
}

// WriteJUnit writes the results as one test suite named after the run.
func WriteJUnit(w io.Writer, run string, rs []Result) error {
	s := junitSuite{Name: "cnperf check " + run, Tests: len(rs)}
	for _, r := range rs {
		c := junitCase{Class: "cnperf.check", Name: r.Name, Output: r.Line}
		switch r.Verdict {
		case Broken:
			c.Failure = &junitMessage{Message: r.Line}
			s.Failures++
		case CannotTell:
			c.Skipped = &junitMessage{Message: r.Line}
			s.Skipped++
		}
		s.Cases = append(s.Cases, c)
	}
	b, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{s}}, "", "  ")
	if err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	if _, err := io.WriteString(w, xml.Header+string(b)+"\n"); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	return nil
}
