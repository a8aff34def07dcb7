package lab

import (
	"strings"

	"github.com/cnperf/cnperf/internal/netnsutil"
)

// The switch bridge's alias records the lab's mode: "cnperf:<lab> mode=<mode>".
func markSwitch(ns, lab, mode string) error {
	h, err := netnsutil.Handle(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	br, err := h.LinkByName("br0")
	if err != nil {
		return err
	}
	return h.LinkSetAlias(br, "cnperf:"+lab+" mode="+mode)
}

func readSwitchMode(ns string) string {
	h, err := netnsutil.Handle(ns)
	if err != nil {
		return "?"
	}
	defer h.Close()
	br, err := h.LinkByName("br0")
	if err != nil {
		return "?"
	}
	_, mode, ok := strings.Cut(br.Attrs().Alias, " mode=")
	if !ok {
		return "?"
	}
	return mode
}
