package machine

import "fmt"

// Validate refuses options no profile can be measured with, naming the
// flag of `cnperf machine profile` the user wrote: bad input, refused
// before anything is measured.
func (o Options) Validate() error {
	switch {
	case o.Repeat < 1 || o.Repeat > MaxRepeat:
		return fmt.Errorf("--repeat %d: must be in 1..%d", o.Repeat, MaxRepeat)
	case o.DiskBytes < MinDiskBytes || o.DiskBytes > MaxDiskBytes:
		return fmt.Errorf("--disk-size %d: must be in %d..%d bytes", o.DiskBytes, MinDiskBytes, MaxDiskBytes)
	case o.NetworkTime <= 0 || o.NetworkTime > MaxNetworkTime:
		return fmt.Errorf("--net-time %s: must be in (0s, %s]", o.NetworkTime, MaxNetworkTime)
	}
	return nil
}
