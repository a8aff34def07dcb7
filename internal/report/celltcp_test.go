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
			got := CellTCP(record.Meta{Modes: modes, Cells: tt.cells})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("CellTCP = %+v, want %+v", got, tt.want)
			}
			var sb strings.Builder
			if err := WriteTCPTable(&sb, got); err != nil {
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
