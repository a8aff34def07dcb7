package sysinfo

import (
	"strings"
	"testing"
)

func TestKernelConfig(t *testing.T) {
	c, err := parseKernelConfig(strings.NewReader("# comment\nCONFIG_NET_SCH_FQ=y\nCONFIG_WIREGUARD=m\n# CONFIG_GENEVE is not set\nCONFIG_HZ=250\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		option     string
		has, known bool
	}{
		{"CONFIG_NET_SCH_FQ", true, true},
		{"CONFIG_WIREGUARD", true, true},
		{"CONFIG_GENEVE", false, true},
		{"CONFIG_NETKIT", false, true},
		{"CONFIG_HZ", false, true},
	} {
		if has, known := c.Has(tc.option); has != tc.has || known != tc.known {
			t.Errorf("Has(%s) = %v, %v; want %v, %v", tc.option, has, known, tc.has, tc.known)
		}
	}
	if has, known := KernelConfig(nil).Has("CONFIG_NET_SCH_FQ"); has || known {
		t.Error("a kernel that gives no config says nothing")
	}
}
