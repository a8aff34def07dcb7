package workload

import (
	"encoding/json"
)

// MovedBytes is the payload a test's total record says it moved (stream:
// received bytes; rr: transactions × (request + response); jitter and
// datagram: received bytes), for CPU seconds per GB.
func MovedBytes(total json.RawMessage) int64 {
	var t struct {
		ReceiverBytes int64 `json:"receiver_bytes"`
		Transactions  int64 `json:"transactions"`
		Request       int64 `json:"request_size"`
		Response      int64 `json:"response_size"`
		Bytes         int64 `json:"bytes"`
	}
	if json.Unmarshal(total, &t) != nil {
		return 0
	}
	return t.ReceiverBytes + t.Transactions*(t.Request+t.Response) + t.Bytes
}
