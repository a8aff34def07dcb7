package machine

import (
	"strings"
	"testing"
	"time"
)

// TestOptionsValidate: what `cnperf machine profile` refuses before it
// measures, in its flags' words.
func TestOptionsValidate(t *testing.T) {
	good := Options{Repeat: 3, DiskBytes: DefaultDiskBytes, NetworkTime: DefaultNetworkTime}
	if err := good.Validate(); err != nil {
		t.Fatalf("the defaults are refused: %v", err)
	}
	for _, tc := range []struct {
		f    func(*Options)
		want string
	}{
		{func(o *Options) { o.Repeat = 0 }, "--repeat 0: must be in 1.."},
		{func(o *Options) { o.Repeat = MaxRepeat + 1 }, "--repeat"},
		{func(o *Options) { o.DiskBytes = MinDiskBytes - 1 }, "--disk-size"},
		{func(o *Options) { o.DiskBytes = MaxDiskBytes + 1 }, "bytes"},
		{func(o *Options) { o.NetworkTime = 0 }, "--net-time 0s: must be in (0s, "},
		{func(o *Options) { o.NetworkTime = MaxNetworkTime + time.Second }, "--net-time"},
	} {
		o := good
		tc.f(&o)
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one with %q", o, err, tc.want)
		}
	}
	if _, err := LoadAll(make([]string, MaxProfiles+1)); err == nil || err.Error() != "65 profiles, more than 64" {
		t.Errorf("LoadAll of 65 = %v", err)
	}
}
