package netns

import (
	"fmt"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/owner"
)

// Mark is what every namespace of a lab carries as its loopback's alias:
// "cnperf:<lab> mode=<mode> owner=<PID.START|none>". cnperf finds its labs
// by this mark, never by a namespace's name alone, and `clean` removes a
// lab only when its owner (the process that built it) has exited.
type Mark struct {
	Lab   string
	Mode  string
	Owner owner.ID
}

const markPrefix = "cnperf:"

func (m Mark) String() string {
	return fmt.Sprintf("%s%s mode=%s owner=%s", markPrefix, m.Lab, m.Mode, m.Owner)
}

// parseMark reads a mark; ok is false for anything cnperf did not write.
func parseMark(s string) (Mark, bool) {
	rest, found := strings.CutPrefix(s, markPrefix)
	if !found {
		return Mark{}, false
	}
	f := strings.Fields(rest)
	if len(f) != 3 || lab.ValidName(f[0]) != nil {
		return Mark{}, false
	}
	mode, ok1 := strings.CutPrefix(f[1], "mode=")
	own, ok2 := strings.CutPrefix(f[2], "owner=")
	if !ok1 || !ok2 {
		return Mark{}, false
	}
	id, err := owner.Parse(own)
	if err != nil {
		return Mark{}, false
	}
	return Mark{Lab: f[0], Mode: mode, Owner: id}, true
}

// readMark returns the mark of a namespace; ok is false when the namespace
// is not cnperf's (or vanished meanwhile).
func readMark(ns string) (Mark, bool) {
	s, err := namespace.Mark(ns)
	if err != nil {
		return Mark{}, false
	}
	return parseMark(s)
}
