package serverkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/cnperf/cnperf/internal/workload"
)

// TestCommand: bad --tests and an address Check refuses are bad input
// (not a Failure) before the server runs; the server's own error is a
// Failure; --tests exists only where declared.
func TestCommand(t *testing.T) {
	con := workload.Console{Stdout: io.Discard, Stderr: io.Discard, ListenHelp: "address",
		Listen:        func(s string, port int) (string, error) { return s + ":" + strconv.Itoa(port), nil },
		DefaultListen: func(port int) string { return "" }}
	for _, tc := range []struct {
		name  string
		cmd   Command
		args  []string
		want  string
		fails bool // a workload.Failure
	}{
		{"runs", Command{Tests: true}, []string{"--tests", "3"}, "served 127.0.0.1:9 3", true},
		{"bad tests", Command{Tests: true}, []string{"--tests", "0"}, "--tests 0: must be in [1, 1024]", false},
		{"no tests flag", Command{}, []string{"--tests", "2"}, "unknown flag: --tests", false},
		{"check", Command{Check: func(string) error { return errors.New("no such address") }}, nil, "no such address", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cmd.Use, tc.cmd.Port = "x", 9
			tc.cmd.Serve = func(_ context.Context, addr string, tests int) error {
				return fmt.Errorf("served %s %d", addr, tests)
			}
			cmd := tc.cmd.Cobra(con)
			cmd.SetArgs(append([]string{"--listen", "127.0.0.1"}, tc.args...))
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			var f workload.Failure
			if err == nil || errors.As(err, &f) != tc.fails {
				t.Fatalf("%v (a failure: %v), want %q (a failure: %v)", err, errors.As(err, &f), tc.want, tc.fails)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}
