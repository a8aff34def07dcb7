package drivers

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		driver string
		list   []string
		want   string // "" for no error
	}{
		{"netns", nil, ""},
		{"netns", []string{"netns", "docker"}, ""},
		{"lxd", nil, `driver "lxd": unknown (known: netns, docker, kubernetes)`},
		{"", nil, `driver "": unknown`},
		{"netns", []string{"netns", "kvm"}, `drivers[1] "kvm": unknown (known: netns, docker, kubernetes)`},
	} {
		err := Check(tc.driver, tc.list)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Check(%q, %q) = %v, want %q", tc.driver, tc.list, err, tc.want)
		}
	}
}
