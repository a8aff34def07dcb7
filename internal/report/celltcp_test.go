package report

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// TestCellTCP: per series, in the run's order, retransmits and
// connections add up over the cells, RTT and window are means weighted by
// connections; cells without TCP_INFO count nowhere, and a run without
// any has no rows and prints no table.
func TestCellTCP(t *testing.T) {
	modes := []record.ModeMeta{{Mode: "bridge"}, {Mode: "bare"}}
	tests := []struct {
		name  string
		cells []record.Cell
		want  []TCPRow
	}{
		{"none recorded", []record.Cell{{Mode: "bare"}, {Mode: "bridge"}}, nil},
		{"series order, weighted means", []record.Cell{
			{Mode: "bare", TCP: &tcpinfo.Stats{Connections: 1, Retransmits: 2, RTTUS: 100, Cwnd: 10}},
			{Mode: "bare", TCP: &tcpinfo.Stats{Connections: 3, Retransmits: 1, RTTUS: 200, Cwnd: 2}},
			{Mode: "bare"},
			{Mode: "bridge", TCP: &tcpinfo.Stats{Connections: 2, RTTUS: 50, Cwnd: 10}},
			{Mode: "bridge", TCP: &tcpinfo.Stats{}}, // read nothing
		}, []TCPRow{
			{Mode: "bridge", Cells: 1, Connections: 2, RTTUS: 50, Cwnd: 10},
			{Mode: "bare", Cells: 2, Connections: 4, Retransmits: 3, RTTUS: 175, Cwnd: 4},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := record.Meta{Modes: modes, Cells: tt.cells}
			got := CellTCP(m)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CellTCP = %+v, want %+v", got, tt.want)
			}
			var sb strings.Builder
			if err := tcpTables(m)[0].write(&sb); err != nil {
				t.Fatal(err)
			}
			if (sb.Len() == 0) != (tt.want == nil) {
				t.Errorf("table %q for rows %+v", sb.String(), got)
			}
			for _, r := range tt.want {
				if !strings.Contains(sb.String(), r.Mode) {
					t.Errorf("table %q lacks %s", sb.String(), r.Mode)
				}
			}
		})
	}
}

// TestCellServerTCP: the servers' sides are summed per series and side,
// in the series' order and then ping, ping to pong, pong; a side no cell
// read is left out, an unknown side is ignored.
func TestCellServerTCP(t *testing.T) {
	modes := []record.ModeMeta{{Mode: "bare"}, {Mode: "bridge"}}
	side := func(n, retrans int64, rtt float64) *tcpinfo.Stats {
		return &tcpinfo.Stats{Connections: n, Retransmits: retrans, RTTUS: rtt, Cwnd: 10}
	}
	cells := []record.Cell{
		{Mode: "bridge", ServerTCP: map[string]*tcpinfo.Stats{"pong": side(1, 4, 300)}},
		{Mode: "bare", ServerTCP: map[string]*tcpinfo.Stats{"pong": side(1, 1, 100), "ping": side(2, 0, 50), "x": side(9, 9, 9)}},
		{Mode: "bare", ServerTCP: map[string]*tcpinfo.Stats{"pong": side(3, 2, 200)}},
		{Mode: "bare", TCP: side(1, 1, 1)},
	}
	m := record.Meta{Modes: modes, Cells: cells}
	got := CellServerTCP(m)
	want := []TCPRow{
		{Mode: "bare", Side: "ping", Cells: 1, Connections: 2, RTTUS: 50, Cwnd: 10},
		{Mode: "bare", Side: "pong", Cells: 2, Connections: 4, Retransmits: 3, RTTUS: 175, Cwnd: 10},
		{Mode: "bridge", Side: "pong", Cells: 1, Connections: 1, Retransmits: 4, RTTUS: 300, Cwnd: 10},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CellServerTCP = %+v, want %+v", got, want)
	}
	var sb strings.Builder
	if err := tcpTables(m)[1].write(&sb); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ping → siege", "pong → ping", "bridge"} {
		if !strings.Contains(sb.String(), s) {
			t.Errorf("table %q lacks %q", sb.String(), s)
		}
	}
	if CellServerTCP(record.Meta{Modes: modes, Cells: cells[3:]}) != nil {
		t.Error("rows for cells without the servers' sides")
	}
}
