package report

import (
	"fmt"
	"io"
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
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "siege's TCP connections to ping (TCP_INFO, over the cells)")
	fmt.Fprintln(tw, "mode\tcells\tconnections\tretrans\tsrtt µs\tcwnd\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t\n", r.Mode, r.Cells, r.Connections, r.Retransmits, textSig(r.RTTUS, 0), textSig(r.Cwnd, 1))
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
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "the servers' TCP connections (TCP_INFO, over the cells; retransmits are the sender's)")
	fmt.Fprintln(tw, "mode\tsender → receiver\tcells\tconnections\tretrans\tsrtt µs\tcwnd\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t\n", r.Mode, sideNames[r.Side], r.Cells, r.Connections, r.Retransmits, textSig(r.RTTUS, 0), textSig(r.Cwnd, 1))
	}
	return tw.Flush()
}

// addCellTCP adds, for each run whose cells recorded TCP_INFO, its table.
func (r *Report) addCellTCP() {
	for ri, run := range r.Runs {
		rows := CellTCP(run.Meta)
		if len(rows) == 0 {
			continue
		}
		suffix, idSuffix := runSuffix(r.Runs, ri)
		t := Table{ID: "tab-tcpinfo" + idSuffix, Title: "Siege's TCP connections" + suffix, Caption: tcpCaption,
			Columns: []string{"mode", "cells", "connections", "retransmits", "smoothed RTT (µs)", "cwnd (segments)"}}
		for _, row := range rows {
			t.Rows = append(t.Rows, []Cell{{Text: row.Mode}, {Text: fmt.Sprint(row.Cells)}, {Text: fmt.Sprint(row.Connections)},
				{Text: fmt.Sprint(row.Retransmits)}, {Text: textSig(row.RTTUS, 0)}, {Text: textSig(row.Cwnd, 1)}})
		}
		r.Tables = append(r.Tables, t)
	}
	for ri, run := range r.Runs {
		rows := CellServerTCP(run.Meta)
		if len(rows) == 0 {
			continue
		}
		suffix, idSuffix := runSuffix(r.Runs, ri)
		t := Table{ID: "tab-tcpservers" + idSuffix, Title: "The servers' TCP connections" + suffix, Caption: serverTCPCaption,
			Columns: []string{"mode", "sender → receiver", "cells", "connections", "retransmits", "smoothed RTT (µs)", "cwnd (segments)"}}
		for _, row := range rows {
			t.Rows = append(t.Rows, []Cell{{Text: row.Mode}, {Text: sideNames[row.Side]}, {Text: fmt.Sprint(row.Cells)}, {Text: fmt.Sprint(row.Connections)},
				{Text: fmt.Sprint(row.Retransmits)}, {Text: textSig(row.RTTUS, 0)}, {Text: textSig(row.Cwnd, 1)}})
		}
		r.Tables = append(r.Tables, t)
	}
}
