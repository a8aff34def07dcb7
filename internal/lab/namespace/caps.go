package namespace

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// NeedAdmin checks that this process may create, enter and delete
// namespaces, links and mounts: CAP_NET_ADMIN and CAP_SYS_ADMIN, which
// the netns driver, `lab down` and `clean` need.
func NeedAdmin() error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("read capabilities: %w", err)
	}
	has := func(c uint) bool { return data[c/32].Effective&(1<<(c%32)) != 0 }
	if !has(unix.CAP_NET_ADMIN) || !has(unix.CAP_SYS_ADMIN) {
		return errors.New("the netns driver needs CAP_NET_ADMIN and CAP_SYS_ADMIN: run cnperf as root")
	}
	return nil
}
