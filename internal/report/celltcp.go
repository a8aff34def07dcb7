package report

import (
	"fmt"
	"slices"

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

// serverTCPCaption says what the servers' TCP_INFO table holds.
const serverTCPCaption = "TCP_INFO of the servers' connections during each cell, from ping's and pong's sums (read by siege before and after the cell): " +
	"per series and side, over the cells, the retransmitted segments of the side's sender (ping's answers to siege, ping's requests to pong, pong's bodies to ping), " +
	"and the smoothed round trip and congestion window, means over the connections read (those open at the cell's end and those that closed during it)."

// sideNames says each side as its sender and receiver.
var sideNames = map[string]string{"ping": "ping → siege", "ping_to_pong": "ping → pong", "pong": "pong → ping"}

// tcpTables are a run's TCP_INFO tables: siege's connections, and the
// servers' by side.
func tcpTables(m record.Meta) []cellTable {
	client := cellTable{id: "tab-tcpinfo", title: "Siege's TCP connections", caption: tcpCaption,
		heading: "siege's TCP connections (TCP_INFO, over the cells)"}
	servers := cellTable{id: "tab-tcpservers", title: "The servers' TCP connections", caption: serverTCPCaption,
		heading: "the servers' TCP connections (TCP_INFO, over the cells; retransmits are the sender's)"}
	out := []cellTable{client, servers}
	for i, rows := range [][]TCPRow{CellTCP(m), CellServerTCP(m)} {
		side := i == 1
		t := &out[i]
		t.cols = []string{"mode", "cells", "connections", "retransmits", "smoothed RTT (µs)", "cwnd (segments)"}
		t.short = []string{"mode", "cells", "connections", "retrans", "srtt µs", "cwnd"}
		if side {
			t.cols, t.short = slices.Insert(t.cols, 1, "sender → receiver"), slices.Insert(t.short, 1, "sender → receiver")
		}
		for _, r := range rows {
			cells := []string{r.Mode, fmt.Sprint(r.Cells), fmt.Sprint(r.Connections), fmt.Sprint(r.Retransmits), textSig(r.RTTUS, 0), textSig(r.Cwnd, 1)}
			if side {
				cells = slices.Insert(cells, 1, sideNames[r.Side])
			}
			t.rows = append(t.rows, cells)
		}
	}
	return out
}

// addCellTCP adds, for each run whose cells recorded TCP_INFO, its tables:
// siege's connections, and the servers' by side.
func (r *Report) addCellTCP() {
	for i := range 2 {
		for ri, run := range r.Runs {
			suffix, idSuffix := runSuffix(r.Runs, ri)
			r.addCells(tcpTables(run.Meta)[i], suffix, idSuffix)
		}
	}
}
