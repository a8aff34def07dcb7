package lab

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Driver builds labs one way: emulated hosts built by hand (netns), Docker
// Engines (docker), a cluster. Each is a package of its own; adding one is
// its package and a line in internal/lab/drivers.
type Driver interface {
	// Name is what a spec's driver field and --driver say.
	Name() string
	// Options decodes the driver's own part of a run (its spec section,
	// its flags) into the value Up gets as Config.Options, and refuses
	// bad values in the spec's or the flag's words before anything is
	// built (bad input). A driver without options returns nil.
	Options(in OptionsInput) (any, error)
	// CheckSpec refuses, in the spec's words, what the driver's section of
	// a spec holds (it decodes it) and what the spec asks of the driver
	// ("use driver: kubernetes"). The catalogue asks every driver, used
	// or not, after the spec's own fields are checked.
	CheckSpec(s spec.Spec) error
	// Preflight says whether this machine can build the driver's labs
	// (privileges, tools, a cluster that answers), after the spec is valid
	// and before anything is built. An error wrapped in Failure is the
	// machine's (exit 1); any other is the user's to mend (exit 2).
	Preflight(p PreflightInput) error
	// Validate refuses, before anything is built, what the driver cannot
	// build: a mode without its interface, conditions it cannot apply, a
	// lab of that name that exists. Up has checked the name, the topology
	// and the ports.
	Validate(cfg Config) error
	// Builds reports whether the driver can build mode m at all (the mode
	// has the driver's interface). A run asks it of every lab before it
	// builds any; Validate says it again for one lab.
	Builds(m Mode) bool
	// Up builds l's hosts as cfg.Topology lists them, has the mode build
	// the endpoints (Build.Endpoints, in the topology's order), fills l's
	// record (hosts, endpoints, how it was built) and sets l.Runtime, the
	// launcher of the lab's processes. Up removes the lab if it fails.
	Up(l *Lab, cfg Config) error
	// Down removes what the driver built for the named lab, from what it
	// finds on the machine (so also after a crash). Removing nothing is
	// not an error.
	Down(name string) error
	// Labs finds the labs the driver built on the machine, with owners.
	Labs() ([]Info, error)
	// Capabilities says what the driver does beyond building labs, with
	// options (what its Options returned; nil before they are decoded).
	Capabilities(options any) Capabilities
	// CheckFamily refuses, before any lab, an ip_family its lab of mode m
	// would not carry (the mode's Families on this driver).
	CheckFamily(m Mode, c conditions.Set) error
	// ChainMode says whether m can run on a chain of hosts (asked when
	// Capabilities.Chains).
	ChainMode(m Mode) error
	// LinkNames are the links the lab of cfg has, in a spec's words, or
	// why it impairs none (asked when Capabilities.ImpairsLinks).
	LinkNames(cfg Config) ([]string, error)
	// LeftoverLabs lists labs whose traces outlived the rest of the lab
	// (cgroups of processes that have died); RemoveLeftovers removes a
	// lab's. Clean asks every driver.
	LeftoverLabs() []string
	RemoveLeftovers(lab string) error
	// SandboxNS is the namespace of a host's container when the driver's
	// containers are its own (the docker driver's sandboxes): `lab exec
	// --container` enters it.
	SandboxNS(lab, host string) (string, error)
	// Flags are the driver's command-line options, which the CLI adds to
	// `cnperf run` and `lab up` as the catalogue lists them.
	Flags() []Flag
}

// Flag is one command-line option of a driver, as data: the CLI registers
// it, reads it (or its environment variable) and hands its value over.
type Flag struct {
	Name, Help string
	// List: a comma-separated list that may be repeated (else one string).
	List bool
	// Env gives the value when the flag is not, and --driver names the
	// driver; the CLI then prints EnvSays after NAME=VALUE.
	Env, EnvSays string
	// Selects: the flag runs the spec on its driver when the spec names
	// another. A flag that does not select is refused unless the spec or
	// --driver names its driver.
	Selects bool
	// RunOnly: `cnperf run` takes it, `lab up` does not.
	RunOnly bool
	// Spec writes the value into the spec (the driver's section), so that
	// the run stores it; nil hands it to Options in OptionsInput.Flags.
	Spec func(s *spec.Spec, value string)
	// Driver is the driver's name (the CLI sets it).
	Driver string
}

// BaseDriver is what a driver that does none of the optional parts
// embeds: it carries any ip_family its modes list, builds no chains,
// impairs no links, leaves nothing behind, has no containers of its own
// and takes no flags nor spec section.
type BaseDriver struct{}

func (BaseDriver) Capabilities(any) Capabilities { return Capabilities{} }

func (BaseDriver) CheckFamily(Mode, conditions.Set) error { return nil }

func (BaseDriver) ChainMode(Mode) error { return errors.New("builds no chains") }

func (BaseDriver) LinkNames(Config) ([]string, error) {
	return nil, errors.New("impairs no links")
}

func (BaseDriver) LeftoverLabs() []string { return nil }

func (BaseDriver) RemoveLeftovers(string) error { return nil }

func (BaseDriver) SandboxNS(lab, host string) (string, error) {
	return "", fmt.Errorf("lab %s: host %s has no container of its driver's", lab, host)
}

func (BaseDriver) Flags() []Flag { return nil }

func (BaseDriver) CheckSpec(spec.Spec) error { return nil }

// Capabilities is what a driver can do, as data: the runner and Up read it
// rather than asking which driver built a lab. The zero value is a driver
// that does none of it.
type Capabilities struct {
	// Tag is what the names of the driver's labs carry ("": its name;
	// names stay within ValidName's 40 characters).
	Tag string
	// SharesStack: the labs share one network stack (an existing engine,
	// other machines' engines, a cluster's nodes), so the runner shifts
	// each lab's ports to keep them apart.
	SharesStack bool
	// PlacesOnNodes: the driver places a lab's hosts on nodes of its own
	// (a cluster's), as the node_placement condition asks; Up refuses the
	// condition on any other.
	PlacesOnNodes bool
	// AppliesPolicies: the driver applies the network_policy condition (a
	// cluster's NetworkPolicies); Up refuses the condition on any other.
	AppliesPolicies bool
	// RunsLocalFiles: a spec's own server commands run from this
	// machine's file system, so they must exist on it.
	RunsLocalFiles bool
	// RunsImages: a spec's own servers run as container images
	// (pingpong.servers' ping_image and pong_image), not commands.
	RunsImages bool
	// Chains: the driver builds chains (hosts in a line), each mode as
	// its ChainMode says.
	Chains bool
	// ImpairsLinks: the driver impairs links of a lab's topology (a
	// spec's links: delay, loss, rate, flaps), those its LinkNames lists;
	// the runner refuses links on any other.
	ImpairsLinks bool
	// Disrupts: the driver stops and starts a cluster's daemons inside
	// cells (a spec's disrupt) and refuses in its Preflight what the
	// cluster does not run; the runner refuses disrupt on any other.
	Disrupts bool
}

// OptionsInput is what a driver decodes its options from.
type OptionsInput struct {
	// Spec is the run's spec (its driver's section: engines:,
	// kubernetes:); for `lab up`, one holding what its flags say.
	Spec spec.Spec
	// Flags are the command line's driver options by flag name (e.g.
	// "docker-host"), those given only.
	Flags map[string]string
	// Topology is the labs' hosts and endpoints.
	Topology Topology
	// Modes are the modes this binary links, for messages that list
	// which of them a setting allows.
	Modes []Mode
	// Warn takes lines the user should read (nil: none are written).
	Warn io.Writer
}

// PreflightInput is what a driver's preflight looks at.
type PreflightInput struct {
	Spec    spec.Spec
	Options any    // what the driver's Options returned
	Exe     string // the cnperf binary the labs' processes run
}

// Failure marks an error that is the machine's, not the input's (exit 1):
// a tool missing, a kernel without a feature, a file that cannot be
// written.
type Failure struct{ Err error }

func (u Failure) Error() string { return u.Err.Error() }
func (u Failure) Unwrap() error { return u.Err }

// SingleHost is a Mode that builds on one host alone (every endpoint on
// the same machine's engine): on an existing engine only these run.
type SingleHost interface {
	SingleHost() bool
}

// IsSingleHost says whether m builds on one host alone.
func IsSingleHost(m Mode) bool {
	s, ok := m.(SingleHost)
	return ok && s.SingleHost()
}

// Needs is a Mode that needs what this machine may lack, such as a build
// of a foreign daemon (the real flanneld): Needs says in one line what is
// missing and which command provides it, nil when the mode can run. Runs
// and `lab up` ask it after the drivers' preflight, before anything is
// built; an error not wrapped in Failure is the user's to mend (exit 2).
type Needs interface {
	Needs() error
}

// CheckNeeds asks m's Needs, if it has one.
func CheckNeeds(m Mode) error {
	if n, ok := m.(Needs); ok {
		return n.Needs()
	}
	return nil
}

// Families is a Mode that carries more than IPv4: Families lists the
// ip_family values (conditions.IPv4, IPv6, Dual) it builds. A mode without
// it carries IPv4 only; a driver refuses any other family for it before
// building.
type Families interface {
	Families() []string
}

// CarriesFamily says whether m builds labs of ip_family f.
func CarriesFamily(m Mode, f string) bool {
	fs := []string{conditions.IPv4}
	if c, ok := m.(Families); ok {
		fs = c.Families()
	}
	return slices.Contains(fs, f)
}

// CheckFamily refuses, in the spec's words, an ip_family m does not carry.
func CheckFamily(m Mode, c conditions.Set) error {
	f := c.Family()
	if CarriesFamily(m, f) {
		return nil
	}
	carried := []string{conditions.IPv4}
	if c, ok := m.(Families); ok {
		carried = c.Families()
	}
	return fmt.Errorf("lab: ip_family %s: mode %s carries %s only", f, m.Name(), strings.Join(carried, " and "))
}

// KernelIPv6 refuses IPv6 on a kernel built without it, whose sysctl tree
// (procSys, /proc/sys here) has no net/ipv6: the lab could not give a
// device an IPv6 address, so the run stops before building any.
func KernelIPv6(procSys string, c conditions.Set) error {
	if !c.HasIPv6() {
		return nil
	}
	if _, err := os.Stat(filepath.Join(procSys, "net", "ipv6")); err != nil {
		return fmt.Errorf("lab: ip_family %s: this kernel has no IPv6 (%s/net/ipv6 is missing)", c.Family(), procSys)
	}
	return nil
}

// JoinAnd joins names as a sentence does: a, b and c.
func JoinAnd(names []string) string {
	switch len(names) {
	case 0:
		return "none"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
