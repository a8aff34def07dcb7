package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// TCPRow is one series' TCP_INFO of its cells' client connections
// (ping-pong's siege to ping), over the cells that recorded it:
// retransmits summed, the smoothed RTT and the window as means over the
// connections.
type TCPRow struct {
	Mode string
	// Side is the servers' side (ServerSides) in CellServerTCP's rows,
	// empty in CellTCP's.
	Side        string
	Cells       int
	Connections int64
	Retransmits int64
	RTTUS       float64
	Cwnd        float64
}

// CellTCP sums the cells' TCP_INFO per series, in the run's series order;
// nil when no cell recorded any (runs made before it was recorded).
func CellTCP(m record.Meta) []TCPRow {
	return sumTCP(m, []string{""}, func(c record.Cell, _ string) *tcpinfo.Stats { return c.TCP })
}

// ServerSides are the sides of the servers' connections a cell may
// record (record.Cell.ServerTCP), in the order tables show them: ping's
// answers to siege, ping's requests to pong, pong's bodies to ping.
var ServerSides = []string{"ping", "ping_to_pong", "pong"}

// CellServerTCP sums the cells' TCP_INFO of the servers' connections per
// series and side (ServerSides), in the run's series order; nil when no
// cell recorded any.
func CellServerTCP(m record.Meta) []TCPRow {
	return sumTCP(m, ServerSides, func(c record.Cell, side string) *tcpinfo.Stats { return c.ServerTCP[side] })
}

// sumTCP sums, per series and side, what of returns for each cell.
func sumTCP(m record.Meta, sides []string, of func(record.Cell, string) *tcpinfo.Stats) []TCPRow {
	type key struct{ mode, side string }
	by := map[key]*TCPRow{}
	for _, c := range m.Cells {
		for _, side := range sides {
			t := of(c, side)
			if t == nil || t.Connections <= 0 {
				continue
			}
			k := key{c.Mode, side}
			r := by[k]
			if r == nil {
				r = &TCPRow{Mode: c.Mode, Side: side}
				by[k] = r
			}
			n := float64(t.Connections)
			r.Cells++
			r.Connections += t.Connections
			r.Retransmits += t.Retransmits
			r.RTTUS += t.RTTUS * n // weighted; divided below
			r.Cwnd += t.Cwnd * n
		}
	}
	var rows []TCPRow
	for _, k := range m.SeriesKeys() {
		for _, side := range sides {
			if r := by[key{k, side}]; r != nil {
				r.RTTUS /= float64(r.Connections)
				r.Cwnd /= float64(r.Connections)
				rows = append(rows, *r)
			}
		}
	}
	return rows
}

// tcpCaption says what the TCP_INFO table holds.
const tcpCaption = "TCP_INFO of siege's connections to ping, read by siege as each closed: per series, over the cells, " +
	"siege's retransmitted segments (its requests, SYN and FIN: ping's lost answers are ping's to retransmit), " +
	"and the kernel's smoothed round trip and congestion window, means over the connections."

// WriteTCPTable prints the rows (nothing without any).
func WriteTCPTable(w io.Writer, rows []TCPRow) error {
	return writeTCP(w, "siege's TCP connections to ping (TCP_INFO, over the cells)", rows, false)
}

// tcpColumns are a TCP_INFO table's columns, with the side's after the
// mode in the servers' (short: the text table's headings).
func tcpColumns(side, short bool) []string {
	cols := []string{"mode", "cells", "connections", "retransmits", "smoothed RTT (µs)", "cwnd (segments)"}
	if short {
		cols = []string{"mode", "cells", "connections", "retrans", "srtt µs", "cwnd"}
	}
	if side {
		cols = slices.Insert(cols, 1, "sender → receiver")
	}
	return cols
}

// tcpCells is a row's cells, the side's after the mode with side.
func tcpCells(r TCPRow, side bool) []string {
	cells := []string{r.Mode, fmt.Sprint(r.Cells), fmt.Sprint(r.Connections), fmt.Sprint(r.Retransmits), textSig(r.RTTUS, 0), textSig(r.Cwnd, 1)}
	if side {
		cells = slices.Insert(cells, 1, sideNames[r.Side])
	}
	return cells
}

// writeTCP prints a TCP_INFO table under its title.
func writeTCP(w io.Writer, title string, rows []TCPRow, side bool) error {
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w)
	fmt.Fprintln(w, title)
	fmt.Fprintln(tw, strings.Join(tcpColumns(side, true), "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(tcpCells(r, side), "\t")+"\t")
	}
	return tw.Flush()
}

// serverTCPCaption says what the servers' TCP_INFO table holds.
const serverTCPCaption = "TCP_INFO of the servers' connections during each cell, from ping's and pong's sums (read by siege before and after the cell): " +
	"per series and side, over the cells, the retransmitted segments of the side's sender (ping's answers to siege, ping's requests to pong, pong's bodies to ping), " +
	"and the smoothed round trip and congestion window, means over the connections read (those open at the cell's end and those that closed during it)."

// sideNames says each side as its sender and receiver.
var sideNames = map[string]string{"ping": "ping → siege", "ping_to_pong": "ping → pong", "pong": "pong → ping"}

// WriteServerTCPTable prints the servers' rows (nothing without any).
func WriteServerTCPTable(w io.Writer, rows []TCPRow) error {
	return writeTCP(w, "the servers' TCP connections (TCP_INFO, over the cells; retransmits are the sender's)", rows, true)
}

// addCellTCP adds, for each run whose cells recorded TCP_INFO, its tables:
// siege's connections, and the servers' by side.
func (r *Report) addCellTCP() {
	for _, tt := range []struct {
		id, title, caption string
		rows               func(record.Meta) []TCPRow
		side               bool
	}{
		{"tab-tcpinfo", "Siege's TCP connections", tcpCaption, CellTCP, false},
		{"tab-tcpservers", "The servers' TCP connections", serverTCPCaption, CellServerTCP, true},
	} {
		for ri, run := range r.Runs {
			rows := tt.rows(run.Meta)
			if len(rows) == 0 {
				continue
			}
			suffix, idSuffix := runSuffix(r.Runs, ri)
			t := Table{ID: tt.id + idSuffix, Title: tt.title + suffix, Caption: tt.caption, Columns: tcpColumns(tt.side, false)}
			for _, row := range rows {
				var cells []Cell
				for _, c := range tcpCells(row, tt.side) {
					cells = append(cells, Cell{Text: c})
				}
				t.Rows = append(t.Rows, cells)
			}
			r.Tables = append(r.Tables, t)
		}
	}
}
