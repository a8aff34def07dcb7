package commands_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"testing"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/grid"
	"github.com/cnperf/cnperf/internal/workload/rr"
	"github.com/cnperf/cnperf/internal/workload/stream"
	"github.com/cnperf/cnperf/internal/workload/udp"
)

// TestTotalsReadTheRecords: each descriptor reads its workload's total
// record, as its client prints it, through a view of the fields analysis
// needs: a field renamed on one side would show here.
func TestTotalsReadTheRecords(t *testing.T) {
	for _, tc := range []struct {
		w      workload.Socket
		record any
		want   workload.Total
	}{
		{descriptors.Stream, stream.Result{Workload: "stream", Protocol: "udp", ReceiverBytes: 1000, ReceiverBitsPerSecond: 8e6, LossPercent: 1.5, OutOfOrder: 3, Retransmits: 9},
			workload.Total{Protocol: "udp", Values: map[string]float64{"throughput": 8, "loss": 1.5, "out_of_order": 3}, Moved: 1000}},
		{descriptors.Stream, stream.Result{Workload: "stream", Protocol: "tcp", ReceiverBytes: 1000, ReceiverBitsPerSecond: 8e6, Retransmits: 9},
			workload.Total{Protocol: "tcp", Values: map[string]float64{"throughput": 8, "retransmits": 9}, Moved: 1000}},
		{descriptors.RR, rr.Result{Workload: "rr", Protocol: "udp", RequestSize: 10, ResponseSize: 90, Transactions: 7, TransPerSec: 70, Lost: 2,
			RoundTrip: rr.Latency{P50: 40, P99: 80}, OneWay: rr.Latency{P50: 20}},
			workload.Total{Protocol: "udp", Values: map[string]float64{"trans_per_s": 70, "rtt_p50": 40, "rtt_p99": 80, "one_way_p50": 20, "rr_lost": 2}, Moved: 700}},
		{descriptors.RR, rr.Result{Workload: "rr", Protocol: "crr", RequestSize: 10, ResponseSize: 90, Transactions: 7, TransPerSec: 70,
			RoundTrip: rr.Latency{P50: 40, P99: 80}, OneWay: rr.Latency{P50: 20}, TCP: &rr.TCPStats{Connections: 7, Retransmits: 3, RTTUS: 55, Cwnd: 10}},
			workload.Total{Protocol: "crr", Values: map[string]float64{"trans_per_s": 70, "rtt_p50": 40, "rtt_p99": 80, "one_way_p50": 20,
				"retransmits": 3, "rtt_us": 55, "cwnd": 10}, Moved: 700}},
		{descriptors.RR, rr.Result{Workload: "rr", Protocol: "tcp", RequestSize: 10, ResponseSize: 90, Transactions: 7, TransPerSec: 70,
			RoundTrip: rr.Latency{P50: 40, P99: 80}, OneWay: rr.Latency{P50: 20}},
			workload.Total{Protocol: "tcp", Values: map[string]float64{"trans_per_s": 70, "rtt_p50": 40, "rtt_p99": 80, "one_way_p50": 20}, Moved: 700}},
		{descriptors.Jitter, udp.JitterRecord{Workload: "jitter", Total: true, Bytes: 4410, BPS: 3e6, LossPct: 2, OutOfOrder: 1, JitterMS: 0.25},
			workload.Total{Values: map[string]float64{"jitter": 0.25, "loss": 2, "out_of_order": 1, "throughput": 3}, Moved: 4410}},
		{descriptors.Datagram, udp.DatagramRecord{Workload: "datagram", Total: true, Bytes: 4410, MBPerS: 5, PacketsPerS: 100, SuccessRate: 0.5, OutOfOrder: 4, AvgOffset: 1.5},
			workload.Total{Values: map[string]float64{"mb_per_s": 5, "packets_per_s": 100, "success": 50, "out_of_order": 4, "avg_offset": 1.5}, Moved: 4410}},
		{descriptors.Grid, grid.Result{Workload: "grid", ValueSize: 700, Puts: 10, PutFailures: 1, RemoveFailures: 2, PutsPerSec: 5, Put: grid.Latency{P50: 30, P99: 60}},
			workload.Total{Protocol: "tcp", Values: map[string]float64{"puts_per_s": 5, "puts": 10, "grid_failures": 3, "put_p50": 30, "put_p99": 60}, Moved: 7000}},
	} {
		var line bytes.Buffer
		if err := workload.NewPrinter(&line, tc.w.Name()).Print(workload.KindEnd, tc.record); err != nil {
			t.Fatal(err)
		}
		got, err := tc.w.Total(json.RawMessage(line.Bytes()))
		if err != nil || got.Protocol != tc.want.Protocol || got.Moved != tc.want.Moved || !maps.Equal(got.Values, tc.want.Values) {
			t.Errorf("%s: %+v, %v; want %+v", tc.w.Name(), got, err, tc.want)
		}
	}
}
