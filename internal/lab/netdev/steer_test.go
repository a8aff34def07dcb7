package netdev

import "testing"

func TestCPUMask(t *testing.T) {
	for _, c := range []struct {
		cpus []int
		n    int
		want string
	}{
		{nil, 2, "00000003"},
		{nil, 1, "00000001"},
		{[]int{0}, 2, "00000001"},
		{[]int{1}, 2, "00000002"},
		{nil, 36, "0000000f,ffffffff"},
		{[]int{32, 0}, 40, "00000001,00000001"},
	} {
		if got := CPUMask(c.cpus, c.n); got != c.want {
			t.Errorf("CPUMask(%v, %d) = %q, want %q", c.cpus, c.n, got, c.want)
		}
	}
}
