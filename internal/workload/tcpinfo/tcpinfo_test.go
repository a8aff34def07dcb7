package tcpinfo

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// TestAccSums: retransmits add up, RTT and cwnd are means over the
// connections, with the largest RTT and smallest window; merging workers'
// sums gives what one worker reading every connection would.
func TestAccSums(t *testing.T) {
	type reading struct{ retrans, rtt, rttvar, cwnd uint32 }
	tests := []struct {
		name    string
		workers [][]reading
		want    *Stats
	}{
		{"none", nil, nil},
		{"one idle worker", [][]reading{{}}, nil},
		{"one connection", [][]reading{{{2, 100, 50, 10}}},
			&Stats{Connections: 1, Retransmits: 2, RTTUS: 100, RTTVarUS: 50, RTTMaxUS: 100, Cwnd: 10, CwndMin: 10}},
		{"crr worker", [][]reading{{{0, 100, 40, 10}, {3, 300, 80, 2}, {1, 200, 60, 10}}},
			&Stats{Connections: 3, Retransmits: 4, RTTUS: 200, RTTVarUS: 60, RTTMaxUS: 300, Cwnd: 22.0 / 3, CwndMin: 2}},
		{"workers merged, an idle one first", [][]reading{{}, {{0, 100, 40, 10}}, {{3, 300, 80, 2}, {1, 200, 60, 10}}},
			&Stats{Connections: 3, Retransmits: 4, RTTUS: 200, RTTVarUS: 60, RTTMaxUS: 300, Cwnd: 22.0 / 3, CwndMin: 2}},
		{"no overflow of uint32 sums", [][]reading{{{1 << 31, 1 << 31, 0, 1 << 31}, {1 << 31, 1 << 31, 0, 1 << 31}}},
			&Stats{Connections: 2, Retransmits: 1 << 32, RTTUS: 1 << 31, RTTMaxUS: 1 << 31, Cwnd: 1 << 31, CwndMin: 1 << 31}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var total Acc
			for _, rs := range tt.workers {
				var w Acc
				for _, r := range rs {
					w.Add(&unix.TCPInfo{Total_retrans: r.retrans, Rtt: r.rtt, Rttvar: r.rttvar, Snd_cwnd: r.cwnd})
				}
				total.Merge(&w)
			}
			got := total.Stats()
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Errorf("stats = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestAccReadsSockets: a kernel socket's TCP_INFO is read, as a
// descriptor and as a conn; a conn that is no socket, or a bad
// descriptor, is not.
func TestAccReadsSockets(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var a Acc
	if !a.ReadConn(c) {
		t.Fatal("no TCP_INFO from a TCP conn")
	}
	f, err := c.(*net.TCPConn).File() // a duplicate descriptor, as rr's hot path reads
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !a.ReadFd(int(f.Fd())) {
		t.Fatal("no TCP_INFO from a descriptor")
	}
	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	if a.ReadConn(p1) || a.ReadFd(-1) {
		t.Error("TCP_INFO read from something that is no socket")
	}
	st := a.Stats()
	if st == nil || st.Connections != 2 || st.Retransmits != 0 || st.RTTUS <= 0 || st.CwndMin < 1 {
		t.Errorf("two loopback readings: %+v", st)
	}
}
