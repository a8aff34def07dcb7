package netdev

import (
	"fmt"
	"os/exec"
	"runtime"
	"strings"
)

// SteerFlows makes dev in ns receive as a NIC with receive-side scaling
// does: each flow's packets are processed on one of cpus (all CPUs when
// nil), chosen by the flow's hash (receive packet steering: the rps_cpus
// of each of its receive queues). A veth otherwise queues each packet on
// the CPU that sent it, and TCP sends from two CPUs at once (the
// application's write, and the ACK that arrived on the other CPU): when one
// CPU's queue waits, a flow arrives out of order. On 2 cores with two test
// clusters up, a 5 s TCP stream between nodes had about 10,000 segments
// declared lost and sent again that had only come late (the receiver's
// DSACKs said so); with steering, none.
func SteerFlows(ns, dev string, cpus []int) error {
	mask := CPUMask(cpus, runtime.NumCPU())
	// sysfs shows the devices of the network namespace it was mounted in:
	// ip netns exec mounts one of ns's, in a mount namespace of the
	// command's own. A kernel without RPS has no rps_cpus: the device
	// stays as it is.
	const script = `for q in /sys/class/net/"$1"/queues/rx-*/rps_cpus; do [ -e "$q" ] || continue; echo "$2" > "$q" || exit 1; done`
	out, err := exec.Command("ip", "netns", "exec", ns, "sh", "-c", script, "sh", dev, mask).CombinedOutput()
	if err != nil {
		return fmt.Errorf("steer flows of %s in %s (rps_cpus %s): %v: %s", dev, ns, mask, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// CPUMask is rps_cpus's bitmap of cpus (all n CPUs when nil): hexadecimal
// words of 32 CPUs, most significant first, comma-separated.
func CPUMask(cpus []int, n int) string {
	if cpus == nil {
		for i := range n {
			cpus = append(cpus, i)
		}
	}
	top := 0
	for _, c := range cpus {
		top = max(top, c)
	}
	words := make([]uint32, top/32+1)
	for _, c := range cpus {
		words[c/32] |= 1 << (c % 32)
	}
	parts := make([]string, len(words))
	for i, w := range words {
		parts[len(words)-1-i] = fmt.Sprintf("%08x", w)
	}
	return strings.Join(parts, ",")
}
