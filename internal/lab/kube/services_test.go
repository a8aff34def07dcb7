package kube

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBatches(t *testing.T) {
	tests := []struct {
		n, size int
		want    [][2]int
	}{
		{0, 500, nil},
		{1, 500, [][2]int{{0, 1}}},
		{500, 500, [][2]int{{0, 500}}},
		{1001, 500, [][2]int{{0, 500}, {500, 1000}, {1000, 1001}}},
	}
	for _, tc := range tests {
		if got := batches(tc.n, tc.size); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("batches(%d, %d) = %v, want %v", tc.n, tc.size, got, tc.want)
		}
	}
	// The largest condition fits the pages countFillers reads.
	if n := len(batches(20000, serviceBatch)); n > maxServicesPages {
		t.Errorf("20000 Services are %d batches, over maxServicesPages %d", n, maxServicesPages)
	}
}

// TestRandomAddrStaysInside: a probe's ClusterIP is never a range's first
// two (the network, the kubernetes Service) or last address, nor outside.
func TestRandomAddrStaysInside(t *testing.T) {
	ranges := []netip.Prefix{netip.MustParsePrefix("198.18.16.0/28"), netip.MustParsePrefix("198.18.32.0/19")}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		a := randomAddr(rnd, ranges)
		in := false
		for _, p := range ranges {
			last := p.Addr()
			for range 1<<(32-p.Bits()) - 1 {
				last = last.Next()
			}
			if p.Contains(a) && a != p.Addr() && a != p.Addr().Next() && a != last {
				in = true
			}
		}
		if !in {
			t.Fatalf("randomAddr = %s: not inside %v past the first two and before the last", a, ranges)
		}
	}
}

func TestParseProxyMetrics(t *testing.T) {
	tests := []struct {
		name, page string
		count      int64
		sum        float64
		err        string
	}{
		{"histogram", "# HELP x\nkubeproxy_sync_proxy_rules_duration_seconds_bucket{le=\"0.001\"} 3\nkubeproxy_sync_proxy_rules_duration_seconds_sum 1.25\nkubeproxy_sync_proxy_rules_duration_seconds_count 7\n", 7, 1.25, ""},
		{"by family", "kubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family=\"IPv4\"} 4.75\nkubeproxy_sync_proxy_rules_duration_seconds_count{ip_family=\"IPv4\"} 80\nkubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family=\"IPv6\"} 0.25\nkubeproxy_sync_proxy_rules_duration_seconds_count{ip_family=\"IPv6\"} 1\n", 81, 5, ""},
		{"missing", "kubeproxy_sync_full_proxy_rules_duration_seconds_count 3\n", 0, 0, "no kubeproxy_sync_proxy_rules_duration_seconds"},
		{"negative", "kubeproxy_sync_proxy_rules_duration_seconds_sum -1\nkubeproxy_sync_proxy_rules_duration_seconds_count 1\n", 0, 0, "_sum"},
		{"NaN", "kubeproxy_sync_proxy_rules_duration_seconds_sum NaN\nkubeproxy_sync_proxy_rules_duration_seconds_count 1\n", 0, 0, "_sum"},
		{"huge count", "kubeproxy_sync_proxy_rules_duration_seconds_sum 1\nkubeproxy_sync_proxy_rules_duration_seconds_count 1e300\n", 0, 0, "_count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := parseProxyMetrics(strings.NewReader(tc.page))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || s.count != tc.count || s.sum != tc.sum {
				t.Fatalf("= %+v, %v; want %d, %g", s, err, tc.count, tc.sum)
			}
		})
	}
}

func FuzzParseProxyMetrics(f *testing.F) {
	f.Add("kubeproxy_sync_proxy_rules_duration_seconds_sum 1.25\nkubeproxy_sync_proxy_rules_duration_seconds_count 7\n")
	f.Add("kubeproxy_sync_proxy_rules_duration_seconds_sum +Inf\n")
	f.Fuzz(func(t *testing.T, page string) {
		s, err := parseProxyMetrics(strings.NewReader(page))
		if err == nil && (s.count < 0 || !(s.sum >= 0)) {
			t.Fatalf("accepted %+v", s)
		}
	})
}

func TestNftCounts(t *testing.T) {
	doc := `{"nftables": [{"metainfo": {"json_schema_version": 1}}, {"table": {"family": "ip", "name": "kube-proxy"}},
	{"chain": {"name": "services"}}, {"rule": {"chain": "services", "expr": []}}, {"rule": {"chain": "nat-prerouting"}},
	{"map": {"name": "service-ips", "elem": [[1, 2], [3, 4], [5, 6]]}}, {"set": {"name": "cluster-ips", "elem": ["198.18.16.1"]}}]}`
	rules, elems, err := nftCounts([]byte(doc))
	if err != nil || rules != 2 || elems != 4 {
		t.Fatalf("nftCounts = %d rules, %d elements, %v; want 2, 4", rules, elems, err)
	}
	if _, _, err := nftCounts([]byte("table ip kube-proxy {")); err == nil {
		t.Fatal("nftCounts took text for JSON")
	}
}

func FuzzNftCounts(f *testing.F) {
	f.Add([]byte(`{"nftables": [{"rule": {}}, {"map": {"elem": [1]}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, e, err := nftCounts(b)
		if err == nil && (r < 0 || e < 0) {
			t.Fatalf("negative counts %d, %d", r, e)
		}
	})
}

func TestCountPrefixed(t *testing.T) {
	save := "*nat\n:KUBE-SERVICES - [0:0]\n-A KUBE-SERVICES -d 198.18.16.1/32 -j KUBE-SVC-X\n-A KUBE-SVC-X -j KUBE-SEP-Y\nCOMMIT\n"
	if n := countPrefixed([]byte(save), "-A "); n != 2 {
		t.Fatalf("countPrefixed = %d, want 2", n)
	}
}

// TestParallel: every index is done once, at most serviceWorkers at a
// time, and an error is returned once all have returned.
func TestParallel(t *testing.T) {
	var mu sync.Mutex
	done, running, most := map[int]int{}, 0, 0
	err := parallel(1000, func(i int) error {
		mu.Lock()
		done[i]++
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(time.Microsecond)
		mu.Lock()
		running--
		mu.Unlock()
		if i == 500 {
			return errors.New("five hundred")
		}
		return nil
	})
	if err == nil || err.Error() != "five hundred" || len(done) != 1000 || most > serviceWorkers {
		t.Fatalf("parallel: %v, %d done, %d at once (at most %d)", err, len(done), most, serviceWorkers)
	}
	for i, n := range done {
		if n != 1 {
			t.Fatalf("index %d done %d times", i, n)
		}
	}
}
