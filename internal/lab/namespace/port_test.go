package namespace

import "testing"

func TestHasPort(t *testing.T) {
	// /proc/net/tcp and udp lines: local address, remote address, state.
	table := []byte(`  sl  local_address rem_address   st
   0: 00000000:1451 00000000:0000 0A 00000000:00000000
   1: 0100007F:1F90 0100007F:D2A4 01 00000000:00000000
   2: 00000000:206D 00000000:0000 07 00000000:00000000
`)
	tests := []struct {
		port   int
		listen bool
		want   bool
	}{
		{5201, true, true},   // 0x1451 listening
		{8080, true, false},  // 0x1F90 only established
		{8080, false, true},  // any state counts for UDP
		{8301, false, true},  // 0x206D bound UDP
		{9999, false, false}, // absent
	}
	for _, tc := range tests {
		if got := hasPort(table, tc.port, tc.listen); got != tc.want {
			t.Errorf("hasPort(%d, listen %v) = %v, want %v", tc.port, tc.listen, got, tc.want)
		}
	}
}
