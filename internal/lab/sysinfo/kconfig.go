package sysinfo

import (
	"bufio"
	"compress/gzip"
	"io"
	"os"
	"strings"
)

// KernelConfig is the running kernel's build configuration: option to
// value (CONFIG_NET_SCH_FQ to "y" or "m"), nil when the kernel does not
// give it (no /proc/config.gz).
type KernelConfig map[string]string

// ReadKernelConfig reads /proc/config.gz.
func ReadKernelConfig() KernelConfig {
	f, err := os.Open("/proc/config.gz")
	if err != nil {
		return nil
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return nil
	}
	c, err := parseKernelConfig(io.LimitReader(z, 16<<20))
	if err != nil {
		return nil
	}
	return c
}

// parseKernelConfig reads a kernel .config: OPTION=VALUE lines; "# OPTION
// is not set" and comments are left out.
func parseKernelConfig(r io.Reader) (KernelConfig, error) {
	c := KernelConfig{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && strings.HasPrefix(k, "CONFIG_") {
			c[k] = v
		}
	}
	return c, sc.Err()
}

// Has reports whether the kernel was built with option, in or as a
// module, and known whether the kernel said.
func (c KernelConfig) Has(option string) (has, known bool) {
	if c == nil {
		return false, false
	}
	v := c[option]
	return v == "y" || v == "m", true
}
