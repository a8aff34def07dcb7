// Package presets embeds cnperf's ready-made experiments. Each is a plain
// spec file: `cnperf presets NAME > my.yaml`, edit, `cnperf run my.yaml`.
package presets

import (
	"embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// Names lists the presets.
func Names() []string {
	entries, _ := files.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(names)
	return names
}

// Read returns a preset's YAML.
func Read(name string) ([]byte, error) {
	b, err := files.ReadFile(name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("unknown preset %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return b, nil
}
