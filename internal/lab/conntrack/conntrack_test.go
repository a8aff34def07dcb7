package conntrack

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const stat = `entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete search_restart
000005dc  00000000 00000000 00000000 00000003 00000000 00000000 00000000 00000000 00000001 0000000a 00000002 00000000  00000000 00000000 00000000 00000000
000005dc  00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 000000f0 00000000 00000000  00000000 00000000 00000000 00000000
`

func TestParseStat(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     Stat
		err      bool
	}{
		{"two CPUs", stat, Stat{Drop: 0xfa, EarlyDrop: 2, InsertFailed: 1}, false},
		{"header only", strings.SplitN(stat, "\n", 2)[0], Stat{}, true},
		{"no drop column", "entries insert_failed early_drop\n1 2 3\n", Stat{}, true},
		{"short line", "entries drop early_drop insert_failed\n1 2\n", Stat{}, true},
		{"not hex", "drop early_drop insert_failed\nzz 1 1\n", Stat{}, true},
		{"over 32 bits", "drop early_drop insert_failed\n100000000 1 1\n", Stat{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseStat(c.in)
			if (err != nil) != c.err || got != c.want {
				t.Errorf("ParseStat = %+v, %v; want %+v, error %v", got, err, c.want, c.err)
			}
		})
	}
}

func TestParseObjectSize(t *testing.T) {
	slab := "slabinfo - version: 2.1\n# name <active_objs> <num_objs> <objsize> <objperslab>\nnf_conntrack_expect 0 0 208 19 1\nnf_conntrack          16     16    256   16    1 : tunables    0    0    0\n"
	for _, c := range []struct {
		name, in string
		want     int
		ok       bool
	}{
		{"slabinfo", slab, 256, true},
		{"absent", "slabinfo - version: 2.1\nkmalloc-64 1 1 64 64 1\n", 0, false},
		{"zero", "nf_conntrack 1 1 0 1 1\n", 0, false},
		{"huge", "nf_conntrack 1 1 99999999 1 1\n", 99999999, false},
	} {
		got, ok := ParseObjectSize(c.in)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("%s: ParseObjectSize = %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestStatSub(t *testing.T) {
	a, b := Stat{Drop: 10, EarlyDrop: 5, InsertFailed: 1}, Stat{Drop: 4, EarlyDrop: 6, InsertFailed: 1}
	if got := a.Sub(b); got != (Stat{Drop: 6}) || got.Total() != 6 {
		t.Errorf("Sub = %+v", got)
	}
}

// TestFreeShares: labs that set the same value share the machine's
// original; another value is refused naming the lab that holds it; a
// damaged record is an error, not a guess.
func TestFreeShares(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	if orig, err := Free(root, b, 1500); err != nil || orig != -1 {
		t.Fatalf("no lab set it: %d, %v", orig, err)
	}
	if err := os.MkdirAll(a, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(a, savedFile), []byte("262144 1500\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if orig, err := Free(root, b, 1500); err != nil || orig != 262144 {
		t.Errorf("same value: %d, %v; want the machine's 262144", orig, err)
	}
	if orig, err := Free(root, a, 9000); err != nil || orig != -1 {
		t.Errorf("the lab itself: %d, %v", orig, err)
	}
	if _, err := Free(root, b, 9000); err == nil || !strings.Contains(err.Error(), "lab a has set net.netfilter.nf_conntrack_max to 1500") {
		t.Errorf("another value: %v", err)
	}
	if err := os.WriteFile(filepath.Join(a, savedFile), []byte("262144\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Free(root, b, 1500); err == nil {
		t.Error("a damaged record taken")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(stat)
	f.Add("nf_conntrack 16 16 256 16 1\n")
	f.Add("drop early_drop insert_failed\nffffffff ffffffff ffffffff\n")
	f.Fuzz(func(t *testing.T, s string) {
		if st, err := ParseStat(s); err == nil && (st.Drop < 0 || st.EarlyDrop < 0 || st.InsertFailed < 0) {
			t.Errorf("ParseStat(%q) = %+v", s, st)
		}
		if n, ok := ParseObjectSize(s); ok && (n <= 0 || n > 1<<20) {
			t.Errorf("ParseObjectSize(%q) = %d", s, n)
		}
	})
}
