package serverkit

import (
	"encoding/json"
	"net"
	"time"
)

// Replier writes a server's answers on control connection c: JSON, one
// object a line, each within ControlTimeout; false: c failed.
func Replier[T any](c net.Conn) func(T) bool {
	enc := json.NewEncoder(c)
	return func(v T) bool {
		_ = c.SetWriteDeadline(time.Now().Add(ControlTimeout))
		return enc.Encode(v) == nil
	}
}
