package netdev

import "golang.org/x/sys/unix"

func closeFd(fd int) { _ = unix.Close(fd) }
