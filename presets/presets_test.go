package presets

import (
	"strings"
	"testing"
)

// TestHeadersSayHowTheyDiffer: every preset's header comment says how it
// differs from the paper it follows, or that it follows none.
func TestHeadersSayHowTheyDiffer(t *testing.T) {
	for _, name := range Names() {
		b, err := Read(name)
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := strings.Cut(string(b), "\nname: ")
		if !strings.Contains(head, "# Differs from") && !strings.Contains(head, "# Follows no paper") {
			t.Errorf("%s: the header says neither how it differs from its paper nor that it follows none", name)
		}
	}
}
