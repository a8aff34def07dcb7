package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/cli"
	"github.com/cnperf/cnperf/internal/lab/drivers"
)

// These tests only run commands that fail validation before anything is
// built, or pure commands: they need no root and touch no network, and as
// root they must not create namespaces either.

func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = cli.Main(drivers.Catalog(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// writeSpec writes a spec file outside the working directory.
func writeSpec(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDriverFlagEnv: a driver flag's environment variable gives it when
// --driver names its driver, and the CLI says so; the driver decodes it.
func TestDriverFlagEnv(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("DOCKER_HOST", "/var/run/docker.sock")
	code, _, stderr := run("run", "--preset", "tiny", "--modes", "bare", "--driver", "docker")
	want := "cnperf: DOCKER_HOST=/var/run/docker.sock: running on that engine (unset it for emulated hosts, a dockerd each)\n" +
		`cnperf: preset tiny with --modes, --driver: --docker-host "/var/run/docker.sock": want unix:///PATH or tcp://HOST:PORT` + "\n"
	if code != 2 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 2, %q", code, stderr, want)
	}
}

func TestFailures(t *testing.T) {
	specs := t.TempDir()
	unknownField := writeSpec(t, specs, "unknown.yaml", "name: x\nmodes: [bare]\ncolour: red\n")
	minMax := writeSpec(t, specs, "minmax.yaml", "name: x\nmodes: [bare]\npingpong:\n  min_size: 100\n  max_size: 10\n")
	wrongType := writeSpec(t, specs, "type.yaml", "name: x\nmodes: 3\n")
	empty := writeSpec(t, specs, "empty.yaml", "")
	bigDatagram := writeSpec(t, specs, "dgram.yaml", "name: x\nmodes: [bare]\ntests:\n  - {workload: datagram, length: 70000}\n")
	good := writeSpec(t, specs, "good.yaml", "name: x\nmodes: [bare]\n")
	zoneHost := writeSpec(t, specs, "zone.yaml", "name: x\nmodes: [bare]\nconditions: {zone_delay: 10ms, zone_hosts: nosuch}\n")
	fanOut := writeSpec(t, specs, "fan.yaml", "name: x\nmodes: [bare]\nplacement: {clients: 2}\ntests:\n  - {workload: stream, clients: 3}\n")
	noRun := t.TempDir() // a directory without run.json
	notEmpty := t.TempDir()
	writeSpec(t, notEmpty, "old.txt", "")

	tests := []struct {
		name string
		args []string
		code int      // 0 means "any non-zero"
		want []string // substrings of the stderr line
	}{
		{"unknown command", []string{"nosuch"}, 2, []string{`unknown command "nosuch"`}},
		{"unknown flag on run", []string{"run", "--nosuch"}, 2, []string{"--nosuch"}},
		{"unknown flag on root", []string{"--nosuch"}, 2, []string{"--nosuch"}},
		{"run without spec or preset", []string{"run"}, 2, []string{"--preset", "quick", "seed001", "tiny"}},
		{"run unknown preset", []string{"run", "--preset", "nosuch"}, 2, []string{`"nosuch"`}},
		{"run spec and preset", []string{"run", good, "--preset", "quick"}, 2, []string{"not both"}},
		{"run two specs", []string{"run", good, good}, 2, []string{"accepts at most 1 arg"}},
		{"run missing spec file", []string{"run", filepath.Join(specs, "nosuch.yaml")}, 2, []string{"nosuch.yaml"}},
		{"run unknown field", []string{"run", unknownField}, 2, []string{"unknown.yaml", `unknown field "colour"`}},
		{"run min above max", []string{"run", minMax}, 2, []string{"minmax.yaml", "pingpong.max_size", "min_size"}},
		{"run wrong type", []string{"run", wrongType}, 2, []string{"type.yaml", "modes"}},
		{"run empty spec", []string{"run", empty}, 2, []string{"empty.yaml", "empty spec"}},
		{"run -o non-empty", []string{"run", good, "-o", notEmpty}, 2, []string{"-o: " + notEmpty + " is not empty"}},
		{"run -o a file", []string{"run", good, "-o", good}, 2, []string{"-o: " + good + " exists and is not a directory"}},
		{"run zone host the lab lacks", []string{"run", zoneHost}, 2, []string{"conditions.zone_hosts", "no host nosuch", "siege, ping, pong"}},
		{"run more clients than placed", []string{"run", fanOut}, 2, []string{"tests[0].clients 3", "placement.clients"}},
		{"run kubernetes flag without its driver", []string{"run", "--preset", "tiny", "--nodes", "a,b"}, 2, []string{"--kubeconfig, --context, --image, --image-pull-policy and --nodes are for the kubernetes driver: add --driver kubernetes"}},
		{"run kubernetes flag checked in the spec", []string{"run", "--preset", "tiny", "--driver", "kubernetes", "--modes", "k8s-pod", "--nodes", "Bad_Node,b"}, 2, []string{`with --modes, --driver, --nodes: kubernetes.nodes[0] "Bad_Node": not a node name`}},
		{"run unknown driver", []string{"run", "--preset", "tiny", "--driver", "lxd"}, 2, []string{`driver "lxd"`, "netns, docker"}},
		{"run bad docker host", []string{"run", "--preset", "tiny", "--modes", "bare", "--docker-host", "/var/run/docker.sock"}, 2, []string{"--docker-host", "unix:///PATH"}},
		{"run multi-host mode on one engine", []string{"run", "--preset", "tiny", "--docker-host", "unix:///x.sock"}, 2, []string{"mode overlay needs emulated hosts"}},
		{"conditions on one engine", []string{"run", "--preset", "seed004", "--modes", "bare,bridge", "--docker-host", "unix:///x.sock"}, 2, []string{"--docker-host: conditions (lab) change the hosts"}},
		{"lab up unknown driver", []string{"lab", "up", "x", "--driver", "lxd"}, 2, []string{`--driver "lxd"`}},
		{"run datagram too big", []string{"run", bigDatagram}, 2, []string{"dgram.yaml", "tests[0]", "70000"}},
		{"run unknown mode", []string{"run", "--preset", "quick", "--modes", "bare,nosuch"}, 2, []string{"modes", `"nosuch"`}},
		{"run duration on ping-pong", []string{"run", "--preset", "quick", "--duration", "5s"}, 2, []string{"--duration", "only for socket tests"}},
		{"run negative duration", []string{"run", "--preset", "seed000", "--duration", "-5s"}, 2, []string{"--duration -5s"}},
		{"run duplicate mode", []string{"run", "--preset", "quick", "--modes", "bare,bare"}, 2, []string{"modes", `"bare" is listed twice`}},
		{"run empty mode", []string{"run", "--preset", "quick", "--modes", "bare,"}, 2, []string{"modes", `unknown mode ""`}},
		{"run label without value", []string{"run", "--preset", "quick", "--label", "novalue"}, 2, []string{"--label", `"novalue"`, "KEY=VALUE"}},
		{"run label without key", []string{"run", "--preset", "quick", "--label", "=v"}, 2, []string{"--label", `"=v"`}},
		{"lab up bad name", []string{"lab", "up", "bad-name", "--mode", "bare"}, 2, []string{`"bad-name"`}},
		{"lab up upper-case name", []string{"lab", "up", "Bad", "--mode", "bare"}, 2, []string{`"Bad"`}},
		{"lab up unknown mode", []string{"lab", "up", "x", "--mode", "nosuch"}, 2, []string{`unknown mode "nosuch"`}},
		{"lab up bad port", []string{"lab", "up", "x", "--mode", "bare", "--port", "0"}, 2, []string{"--port 0"}},
		{"lab up no name", []string{"lab", "up", "--mode", "bare"}, 2, []string{"accepts 1 arg"}},
		{"lab up bad family", []string{"lab", "up", "x", "--mode", "bare", "--ip-family", "6"}, 2, []string{`--ip-family "6": use ipv4, ipv6 or dual`}},
		{"lab up family the mode lacks", []string{"lab", "up", "x", "--mode", "overlay-userspace", "--ip-family", "ipv6"}, 2, []string{"--ip-family ipv6: mode overlay-userspace carries ipv4 only"}},
		{"lab down bad name", []string{"lab", "down", "ok", "bad-name"}, 2, []string{`"bad-name"`}},
		{"lab exec bad name", []string{"lab", "exec", "bad-name", "h", "--", "true"}, 2, []string{`"bad-name"`}},
		{"siege without target", []string{"siege"}, 2, []string{"--target"}},
		{"siege coverage 2", []string{"siege", "--target", "http://127.0.0.1:1", "--coverage", "2"}, 2, []string{"coverage", "(0, 1]"}},
		{"siege coverage 0", []string{"siege", "--target", "http://127.0.0.1:1", "--coverage", "0"}, 2, []string{"coverage"}},
		{"siege min above max", []string{"siege", "--target", "http://127.0.0.1:1", "--min", "10", "--max", "5"}, 2, []string{"--max must be >= --min"}},
		{"siege concurrency 0", []string{"siege", "--target", "http://127.0.0.1:1", "--concurrency", "0"}, 2, []string{"--concurrency 0"}},
		{"siege timeout 0", []string{"siege", "--target", "http://127.0.0.1:1", "--timeout", "0s"}, 2, []string{"--timeout 0s"}},
		{"stream copy over udp", []string{"stream", "--server", "127.0.0.1", "--udp", "--copy"}, 2, []string{"--copy", "TCP as fast as possible"}},
		{"stream copy when paced", []string{"stream", "--server", "127.0.0.1", "-b", "1G", "--copy"}, 2, []string{"--copy"}},
		{"stream no-gso over tcp", []string{"stream", "--server", "127.0.0.1", "--no-gso"}, 2, []string{"--no-gso", "--udp -b 0"}},
		{"stream threads above parallel", []string{"stream", "--server", "127.0.0.1", "-P", "4", "--threads", "5"}, 2, []string{"--threads 5", "4 stream(s)"}},
		{"stream threads above bound", []string{"stream", "--server", "127.0.0.1", "-P", "128", "--threads", "129"}, 2, []string{"--threads 129", "1..128"}},
		{"stream threads over udp", []string{"stream", "--server", "127.0.0.1", "-P", "4", "--threads", "2", "--udp"}, 2, []string{"--threads 2", "TCP as fast as possible"}},
		{"siege bad format", []string{"siege", "--target", "http://127.0.0.1:1", "--format", "xml"}, 2, []string{`--format "xml"`}},
		{"serve pong negative max size", []string{"serve", "pong", "--max-size", "-1"}, 2, []string{"--max-size -1"}},
		{"export nonexistent", []string{"export", "/nonexistent"}, 0, []string{"/nonexistent"}},
		{"export bad format", []string{"export", noRun, "--format", "xml"}, 2, []string{`--format "xml"`}},
		{"export without run.json", []string{"export", noRun}, 0, []string{noRun, "run.json"}},
		{"summary without run.json", []string{"summary", noRun}, 0, []string{noRun, "run.json"}},
		{"summary nonexistent", []string{"summary", "/nonexistent"}, 0, []string{"/nonexistent"}},
		{"summary no args", []string{"summary"}, 2, []string{"accepts 1 arg"}},
		{"presets unknown", []string{"presets", "nosuch"}, 2, []string{`"nosuch"`, "quick"}},
		{"version with args", []string{"version", "x"}, 2, []string{`"x"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wd := t.TempDir()
			t.Chdir(wd)
			code, stdout, stderr := run(tc.args...)
			t.Logf("exit %d, stderr %q", code, stderr)
			if tc.code != 0 && code != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tc.code, stderr)
			}
			if code == 0 {
				t.Errorf("exit code 0, want a failure (stderr %q)", stderr)
			}
			if !strings.HasPrefix(stderr, "cnperf: ") || !strings.HasSuffix(stderr, "\n") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr is not one line starting with \"cnperf: \": %q", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not contain %q", stderr, w)
				}
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing", stdout)
			}
			// Nothing was built or stored: validation failed first.
			entries, err := os.ReadDir(wd)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				t.Errorf("working directory gained %q", e.Name())
			}
			if _, err := os.Stat(filepath.Join(wd, "runs")); err == nil {
				t.Error(`a "runs" directory was created`)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, stdout, stderr := run("version")
	if code != 0 || stderr != "" {
		t.Fatalf("version: code %d, stderr %q", code, stderr)
	}
	if want := "cnperf " + cli.Version + "\n"; stdout != want {
		t.Errorf("version printed %q, want %q", stdout, want)
	}
}

func TestPresets(t *testing.T) {
	code, stdout, stderr := run("presets")
	if code != 0 || stderr != "" {
		t.Fatalf("presets: code %d, stderr %q", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	var names []string
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			t.Errorf("line %q: want a name and a description", l)
			continue
		}
		names = append(names, f[0])
	}
	if got := strings.Join(names, " "); got != "cni-compare cni-compare-pingpong conntrack drivers emulation emulation-sockets flap ipv6 k8s-disrupt k8s-policy k8s-quick k8s-quick-sockets k8s-services layers quick rrul seed000 seed001 seed001-cores seed002 seed002-hops seed002-offloads seed003 seed004 seed004-zones sockets-tiny tiny" {
		t.Errorf("presets listed %q, want every preset:\n%s", got, stdout)
	}
}

func TestPresetsShow(t *testing.T) {
	for _, name := range []string{"quick", "seed000", "seed001", "seed002", "sockets-tiny", "tiny"} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := run("presets", name)
			if code != 0 || stderr != "" {
				t.Fatalf("code %d, stderr %q", code, stderr)
			}
			if !strings.Contains(stdout, "\nname: "+name+"\n") {
				t.Errorf("output lacks \"name: %s\":\n%s", name, stdout)
			}
			// What it prints is a spec `run` accepts: check it by running it
			// through a failing flag, so nothing is built.
			dir := t.TempDir()
			p := writeSpec(t, dir, name+".yaml", stdout)
			t.Chdir(dir)
			code, _, stderr = run("run", p, "--modes", "nosuch")
			if code != 2 || !strings.Contains(stderr, `unknown mode "nosuch"`) {
				t.Errorf("run of the printed preset: code %d, stderr %q; want the spec to load and the --modes error", code, stderr)
			}
		})
	}
}

func TestRootHelp(t *testing.T) {
	code, stdout, stderr := run()
	if code != 0 || stderr != "" {
		t.Fatalf("code %d, stderr %q", code, stderr)
	}
	for _, w := range []string{"Usage:", "run", "presets", "lab", "siege", "export", "summary", "version"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("help lacks %q:\n%s", w, stdout)
		}
	}
}

// TestSpecRefusalsNameTheSpec: every refusal of a spec names it first, as
// the file (or preset) the user gave, and the flags that changed it, be it
// found reading the YAML, by the spec's own checks, or by the drivers and
// modes the binary links: "modes[1]" alone does not say which file.
func TestSpecRefusalsNameTheSpec(t *testing.T) {
	specs := t.TempDir()
	mode := writeSpec(t, specs, "mode.yaml", "name: x\nmodes: [bare, nosuch]\n")
	link := writeSpec(t, specs, "link.yaml", "name: x\nmodes: [bare, bridge]\nlinks: [{link: nowhere, delay: 1ms}]\n")
	chain := writeSpec(t, specs, "chain.yaml", "name: x\nmodes: [bare, macvlan]\nchain: {hosts: 3}\ntests: [{workload: rr, duration: 2s}]\n")
	syntax := writeSpec(t, specs, "syntax.yaml", "name: x\nmodes: [bare\n")
	field := writeSpec(t, specs, "field.yaml", "name: x\nmodes: [bare]\ncolour: red\n")
	tests := []struct {
		name string
		args []string
		want string // the line's start after "cnperf: "
	}{
		{"unknown mode in a file", []string{"run", mode}, mode + `: modes[1]: unknown mode "nosuch"`},
		{"unknown link in a file", []string{"run", link}, link + `: links[0].link "nowhere": the lab has no such link`},
		{"chain a mode cannot take", []string{"run", chain}, chain + ": modes[1]: "},
		{"syntax error", []string{"run", syntax}, syntax + ": line 2: "},
		{"unknown field", []string{"run", field}, field + `: line 3: unknown field "colour"`},
		{"unknown mode from --modes", []string{"run", "--preset", "quick", "--modes", "bare,nosuch"}, `preset quick with --modes: modes[1]: unknown mode "nosuch"`},
		{"unknown mode from --modes on a file", []string{"run", link, "--modes", "nosuch", "--label", "a=b"}, link + ` with --modes, --label: modes[0]: unknown mode "nosuch"`},
		{"a mode the driver cannot build", []string{"run", "--preset", "tiny", "--driver", "kubernetes"}, "preset tiny with --driver: modes[0]: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			code, stdout, stderr := run(tc.args...)
			if code != 2 || !strings.HasPrefix(stderr, "cnperf: "+tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Errorf("exit %d, stderr %q; want 2 and one line starting %q", code, stderr, "cnperf: "+tc.want)
			}
		})
	}
}
