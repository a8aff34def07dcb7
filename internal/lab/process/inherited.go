package process

import (
	"math"

	"golang.org/x/sys/unix"
)

// CloseInheritedOnExec marks every descriptor cnperf inherited past
// stdin, stdout and stderr close-on-exec, so that no process cnperf starts
// holds what cnperf's caller opened. A daemon outlives the command that
// started it: under `flock LOCK cnperf lab up ...` the lock's descriptor
// went to a lab's dockerd and containerd, and the lock stayed taken until
// `lab down`. Descriptors cnperf hands a child on purpose (os/exec's
// ExtraFiles, the start gate) are unaffected: those are dup'ed into the
// child. cnperf's main calls it first, after AwaitStart.
func CloseInheritedOnExec() error {
	return unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC)
}
