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

// SetOwner gives every namespace of a lab a new owner in its mark: a tool
// that builds a lab in steps (cnperf cluster up) owns it while it builds,
// so that `cnperf clean` removes what a killed build left, and hands it to
// nobody once it is up, as `lab up` does.
func SetOwner(name string, id owner.ID) error {
	nss, err := namespaces(name)
	if err != nil {
		return err
	}
	for _, ns := range nss {
		m, ok := readMark(ns)
		if !ok {
			continue
		}
		m.Owner = id
		h, err := namespace.Handle(ns)
		if err != nil {
			return err
		}
		lo, err := h.LinkByName("lo")
		if err == nil {
			err = h.LinkSetAlias(lo, m.String())
		}
		h.Close()
		if err != nil {
			return fmt.Errorf("mark %s: %w", ns, err)
		}
	}
	return nil
}

// LabMode is the mode a lab's marks name ("" when no namespace of it
// carries one): what a tool reads to know a lab is its own.
func LabMode(name string) (string, error) {
	nss, err := namespaces(name)
	if err != nil {
		return "", err
	}
	for _, ns := range nss {
		if m, ok := readMark(ns); ok {
			return m.Mode, nil
		}
	}
	return "", nil
}
