package profile

import (
	"slices"
	"strings"
	"testing"
)

func TestDefaultMapClassifies(t *testing.T) {
	m := Default()
	if len(m.Parts()) < 15 {
		t.Fatalf("parts.txt has %d parts: %q", len(m.Parts()), m.Parts())
	}
	for _, c := range []struct {
		name, stack, part, where string
	}{
		{"the leaf-most match wins: a lock is its caller's", "server;main;write;entry_SYSCALL_64_[k];do_syscall_64_[k];tcp_sendmsg_[k];_raw_spin_lock_bh_[k]", "TCP/UDP and sockets", "server"},
		{"a copy under TCP is a copy", "client;[unknown];entry_SYSCALL_64_[k];tcp_recvmsg_[k];skb_copy_datagram_iter_[k];_copy_to_iter_[k];rep_movs_alternative_[k]", "data copy", "client"},
		{"iptables under the bridge is the filter", "server;x;tcp_sendmsg_[k];__local_bh_enable_ip_[k];do_softirq_[k];net_rx_action_[k];__netif_receive_skb_core_[k];br_handle_frame_[k];nf_hook_slow_[k];ipt_do_table_[k]", "netfilter: filter", "softirq"},
		{"conntrack", "other;ksoftirqd;run_ksoftirqd_[k];handle_softirqs_[k];ip_rcv_[k];nf_hook_slow_[k];nf_conntrack_in_[k];__nf_conntrack_find_get_[k]", "netfilter: conntrack", "softirq"},
		{"NAT", "client;a;ip_output_[k];nf_hook_slow_[k];nf_nat_ipv4_out_[k];nf_nat_inet_fn_[k]", "netfilter: NAT", "client"},
		{"a UDP tunnel before UDP", "server;x;udp_tunnel_xmit_skb_[k]", "VXLAN / UDP tunnel", "server"},
		{"VXLAN", "idle;handle_softirqs_[k];vxlan_rcv_[k]", "VXLAN / UDP tunnel", "softirq"},
		{"the router's user space", "router;main;golang.zx2c4.com/wireguard/device.(*Device).RoutineReadFromTUN", "TUN and the user-space router", "router"},
		{"the router's cipher is encryption", "router;main;golang.org/x/crypto/chacha20poly1305.(*chacha20poly1305).sealGeneric", "encryption", "router"},
		{"TUN in the kernel", "router;main;write;tun_get_user_[k]", "TUN and the user-space router", "router"},
		{"the server's own code", "server;runtime.goexit;main.serve;encoding/json.Marshal", "servers' own user space", "server"},
		{"Go's scheduler", "server;runtime.mstart;runtime.schedule;runtime.findRunnable", "scheduler and wake-ups", "server"},
		{"a wake-up in softirq", "other;x;handle_softirqs_[k];tcp_v4_rcv_[k];sock_def_readable_[k];__wake_up_sync_key_[k];try_to_wake_up_[k];_raw_spin_lock_irqsave_[k]", "scheduler and wake-ups", "softirq"},
		{"system-call entry", "client;[unknown];entry_SYSCALL_64_[k];do_syscall_64_[k];syscall_exit_to_user_mode_[k]", "system-call entry", "client"},
		{"eBPF", "server;x;__dev_queue_xmit_[k];tcx_egress_[k];bpf_prog_6deef7357e7b4530_cil_to_container_[k]", "eBPF programs", "server"},
		{"veth", "server;x;dev_hard_start_xmit_[k];veth_xmit_[k]", "veth, devices and the backlog", "server"},
		{"a daemon's user space", "daemon:flanneld;main;runtime.goexit;github.com/flannel-io/flannel/x.run", "daemons' user space", "daemons"},
		{"a daemon in the kernel", "daemon:etcd;x;entry_SYSCALL_64_[k];do_syscall_64_[k];__x64_sys_fsync_[k];ext4_sync_file_[k]", "system-call entry", "daemons"},
		{"the idle loop", "idle;secondary_startup_64_[k];do_idle_[k];default_idle_[k]", Idle, Idle},
		{"another process, outside softirq", "other;cc1;entry_SYSCALL_64_[k];tcp_sendmsg_[k]", Outside, Outside},
		{"the runner itself", "cnperf;runtime.goexit;main.main", Outside, Outside},
		{"a user frame of the client named by no rule is the client's", "client;[unknown]", "servers' own user space", "client"},
		{"a kernel stack no rule names", "server;ext4_file_read_iter_[k]", Other, "server"},
		{"what a cap cut", "server;[truncated]", Other, "server"},
	} {
		t.Run(c.name, func(t *testing.T) {
			part, where := m.attributor().classify(c.stack)
			if part != c.part || where != c.where {
				t.Errorf("%s: %q, %q; want %q, %q", c.stack, part, where, c.part, c.where)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"no softirq", "part a\nkernel x", "no softirq"},
		{"no part", "softirq x", "no part"},
		{"a rule first", "softirq x\nkernel y\npart a", "line 2: a rule before the first part"},
		{"a bad regexp", "softirq x\npart a\nkernel (", "line 3: error parsing regexp"},
		{"an unknown key", "softirq x\npart a\nkernal y", `line 3: "kernal" is not`},
		{"a kernel rule with contexts", "softirq x\npart a\nkernel@server y", "is not part"},
		{"two softirq lines", "softirq x\npart a\nsoftirq y", `line 3: "softirq" is not`},
		{"no value", "softirq x\npart", `line 2: "part" without a value`},
		{"a pattern too long", "softirq x\npart a\nkernel " + strings.Repeat("a", maxPattern+1), "line 3: past"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.text)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse: %v; want %q", err, c.want)
			}
		})
	}
}

// FuzzClassify: any stack a run's file can hold gets one of the map's
// parts, other, outside or idle, and a place it ran.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{"server;x;tcp_sendmsg_[k]", "idle", "daemon:etcd;[unknown]", ";;", "other;handle_softirqs_[k];[truncated]", "router;_[k]"} {
		f.Add(s)
	}
	m := Default()
	f.Fuzz(func(t *testing.T, stack string) {
		part, where := m.attributor().classify(stack)
		if !slices.Contains(m.Parts(), part) && part != Other && part != Outside && part != Idle {
			t.Errorf("%q: part %q", stack, part)
		}
		if !slices.Contains(append([]string{Idle, Outside}, places...), where) {
			t.Errorf("%q: ran in %q", stack, where)
		}
	})
}
