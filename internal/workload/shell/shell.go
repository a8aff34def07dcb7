// Package shell is the one command every socket workload's client runs in:
// the flags every client has (--server/-c, --time/-t, --interval/-i,
// --json), the workload's parameters as flags registered from its
// declaration (workload.Param) and checked against its bounds, the signal
// context, the --json envelope's start line, and the exit codes (bad input
// 2, a failed measurement 1, an interruption 130 after printing what was
// measured). A workload's client says only how it measures and prints.
package shell

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/workload"
)

// Client is what a socket workload's client command says of itself.
type Client struct {
	Workload             workload.Socket // its descriptor: name, port, parameters
	Short, Long, Example string
	// Time and Interval are the defaults of --time and --interval;
	// TimeHelp and IntervalHelp say what 0 means where it means something
	// ("" for the usual help).
	Time, Interval         time.Duration
	TimeHelp, IntervalHelp string
	// Flags adds the client's own flags, which no spec field sets.
	Flags func(*pflag.FlagSet)
	// Run measures and prints until it is done or ctx ends (SIGINT,
	// SIGTERM). Its error is bad input (exit 2) unless marked with
	// workload.Fail (exit 1); once ctx has ended, any error is an
	// interruption (exit 130).
	Run func(ctx context.Context, r Run) error
}

// Run is one invocation of a client: its flags' values.
type Run struct {
	Cmd            *cobra.Command
	Server         string // HOST:PORT, the workload's port unless given
	Time, Interval time.Duration
	// Params are the declared parameters' flags, given or default, by
	// the spec's name: int64, time.Duration, bool or string by Kind (a
	// parameter without a value is absent).
	Params workload.Params
	JSON   bool
	Stdout io.Writer
	Stderr io.Writer
	Env    *workload.Printer // the workload's envelope lines, on Stdout
}

// Start prints the start line under --json: the server and every flag's
// value.
func (r Run) Start() {
	if r.JSON {
		_ = r.Env.Print(workload.KindStart, StartOf(r.Cmd, r.Server))
	}
}

// Command is `cnperf NAME`, the workload's client.
func Command(con workload.Console, c Client) *cobra.Command {
	w := c.Workload
	name, port := w.Name(), w.Server().Port
	var server string
	var asJSON bool
	tm, iv := seconds(c.Time), seconds(c.Interval)
	values := map[string]*param{}
	cmd := &cobra.Command{
		Use:     name + " --server HOST[:PORT]",
		Short:   c.Short,
		Long:    c.Long,
		Example: c.Example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			addr, err := withPort(server, port)
			if err != nil {
				return err
			}
			ps := workload.Params{}
			for _, p := range w.Params() {
				v, ok := values[p.Name]
				if !ok {
					continue
				}
				x, err := v.value(cmd.Flags().Changed(strings.TrimPrefix(p.Flag, "--")) || p.Alias != "" && cmd.Flags().Changed(strings.TrimPrefix(p.Alias, "--")))
				if err != nil {
					return err
				}
				if x != nil {
					ps[p.Name] = x
				}
			}
			for _, p := range w.Params() {
				if _, ok := values[p.Name]; !ok {
					continue
				}
				var fe *workload.FieldError
				if err := p.Validate(ps, name); errors.As(err, &fe) {
					return fmt.Errorf("%s %s", p.Flag, fe.Msg)
				}
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			err = c.Run(ctx, Run{Cmd: cmd, Server: addr, Time: time.Duration(tm), Interval: time.Duration(iv), Params: ps,
				JSON: asJSON, Stdout: con.Stdout, Stderr: con.Stderr, Env: workload.NewPrinter(con.Stdout, name)})
			if err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)) {
				return fmt.Errorf("interrupted; printed what was measured: %w", context.Canceled)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVarP(&server, "server", "c", "", fmt.Sprintf("server to measure against: HOST[:PORT] (port %d by default)", port))
	f.VarP(&tm, "time", "t", cmp.Or(c.TimeHelp, "measured time (a bare number is seconds)"))
	f.VarP(&iv, "interval", "i", cmp.Or(c.IntervalHelp, "reporting interval"))
	if c.Time == 0 {
		f.Lookup("time").DefValue = "0" // its help says what 0 is
	}
	for _, p := range w.Params() {
		if p.Flag == "" {
			continue
		}
		v := &param{p: p, text: p.Default}
		fl := f.VarPF(v, strings.TrimPrefix(p.Flag, "--"), p.Short, p.Help)
		if v.boolean() {
			fl.NoOptDefVal = "true"
			v.text = cmp.Or(v.text, "false")
		}
		if p.Kind == workload.Duration && p.Default == "0s" {
			fl.DefValue = "0" // help leaves a zero default out; its help says what 0 is
		}
		values[p.Name] = v
		if p.Alias != "" {
			alias := strings.TrimPrefix(p.Alias, "--")
			f.Var(v, alias, p.Help)
			_ = f.MarkDeprecated(alias, "use "+p.Flag)
		}
	}
	if c.Flags != nil {
		c.Flags(f)
	}
	f.BoolVar(&asJSON, "json", false, "print every interval and the result as JSON lines")
	return cmd
}

// withPort checks --server and completes its port.
func withPort(s string, port int) (string, error) {
	if s == "" {
		return "", fmt.Errorf("--server: give the server's address, HOST[:PORT] (port %d by default)", port)
	}
	if host, p, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
			return "", fmt.Errorf("--server %q: bad port %q", s, p)
		}
		return net.JoinHostPort(host, p), nil
	}
	host := strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	if strings.ContainsAny(host, "[]/ ") {
		return "", fmt.Errorf("--server %q: want HOST or HOST:PORT", s)
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// param is a declared parameter's flag: its text, read by Kind.
type param struct {
	p    workload.Param
	text string
}

func (v *param) String() string { return v.text }
func (v *param) Set(s string) error {
	old := v.text
	v.text = s
	if _, err := v.value(false); err != nil {
		v.text = old
		// pflag names the flag and the value: say only what is wrong.
		_, msg, _ := strings.Cut(err.Error(), ": ")
		return errors.New(msg)
	}
	return nil
}

// boolean: the flag is a switch, or sets its parameter when true.
func (v *param) boolean() bool { return v.p.Kind == workload.Switch || v.p.FlagSets != "" }

func (v *param) Type() string {
	switch {
	case v.p.Kind == workload.Whole:
		return "int"
	case v.p.Kind == workload.Duration:
		return "duration"
	case v.boolean():
		return "bool"
	}
	return "string"
}

// value reads the flag: nil when it has no value. A whole number of bytes
// may have a K, M or G suffix (powers of 1024, as iperf3's -l); a duration
// may be a bare number of seconds (as iperf3's -t); given is whether the
// flag was typed (a 0 typed where the bounds start above is refused).
func (v *param) value(given bool) (any, error) {
	flag := v.p.Flag
	if v.text == "" {
		return nil, nil
	}
	switch {
	case v.boolean():
		b, err := strconv.ParseBool(v.text)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s %q: want true or false", flag, v.text)
		case v.p.FlagSets == "":
			return b, nil
		case b:
			return v.p.FlagSets, nil
		}
		return nil, nil
	case v.p.Kind == workload.Whole:
		n, err := scaled(v.text, v.p.Unit == "bytes")
		if err != nil {
			return nil, fmt.Errorf("%s %q: want a whole number%s", flag, v.text, map[bool]string{true: " of bytes, e.g. 1470 or 128K"}[v.p.Unit == "bytes"])
		}
		for _, b := range v.p.Bounds {
			if given && n == 0 && b.Min > 0 {
				return nil, fmt.Errorf("%s 0: must be at least %d", flag, b.Min)
			}
		}
		return n, nil
	case v.p.Kind == workload.Duration:
		var d seconds
		if err := d.Set(v.text); err != nil {
			return nil, fmt.Errorf("%s %q: %v", flag, v.text, err)
		}
		return time.Duration(d), nil
	}
	return v.text, nil
}

// scaled reads a whole number, with a K, M or G suffix (powers of 1024)
// when bytes.
func scaled(s string, bytes bool) (int64, error) {
	mult := int64(1)
	if n := len(s); bytes && n > 1 {
		switch s[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult != 1 {
			s = s[:n-1]
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > math.MaxInt32/mult || n < math.MinInt32/mult {
		return 0, errors.New("not a whole number")
	}
	return n * mult, nil
}

// ParseRate parses a rate in bits per second with an optional decimal
// suffix, as iperf does: "10M" is 10,000,000; k, M, G, T (either case).
func ParseRate(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := 1.0
	if t != "" {
		switch t[len(t)-1] {
		case 'k', 'K':
			mult = 1e3
		case 'm', 'M':
			mult = 1e6
		case 'g', 'G':
			mult = 1e9
		case 't', 'T':
			mult = 1e12
		}
		if mult != 1 {
			t = t[:len(t)-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: want bits per second like 10M, 1.5G or 0", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q: must be >= 0", s)
	}
	r := v * mult
	if r > math.MaxInt64/2 {
		return 0, fmt.Errorf("%q: too large", s)
	}
	return int64(math.Round(r)), nil
}

// seconds is a duration flag that also takes a bare number of seconds, as
// iperf3's -t does.
type seconds time.Duration

func (d *seconds) String() string { return time.Duration(*d).String() }
func (d *seconds) Type() string   { return "duration" }
func (d *seconds) Set(s string) error {
	if v, err := time.ParseDuration(s); err == nil {
		*d = seconds(v)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e9 {
		return fmt.Errorf("want a duration such as 10s or a number of seconds")
	}
	*d = seconds(time.Duration(f * float64(time.Second)))
	return nil
}

// StartOf is a start line's fields for a client command: the server, and
// every flag but --server and --json with its value, as given or default.
func StartOf(cmd *cobra.Command, server string) workload.Start {
	s := workload.Start{Server: server, Settings: map[string]string{}}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "server" && f.Name != "json" && f.Name != "help" {
			s.Settings[f.Name] = f.Value.String()
		}
	})
	return s
}

// Flag registers a declared parameter as a flag of a program that is no
// socket client (siege, ping, pong) into v, an *int, *int64, *float64 or
// *time.Duration: its name, default and help (with its bound) from p.
func Flag(f *pflag.FlagSet, p workload.Param, v any) {
	name, help := strings.TrimPrefix(p.Flag, "--"), p.Help
	if b := p.Bounds; len(b) > 0 && p.Kind == workload.Duration {
		help += fmt.Sprintf(" (at most %s)", time.Duration(b[0].Max))
	} else if len(b) > 0 && b[0].Min > math.MinInt64 {
		help += fmt.Sprintf(" (%d..%d)", b[0].Min, b[0].Max)
	}
	switch v := v.(type) {
	case *int:
		f.IntVar(v, name, 0, help)
	case *int64:
		f.Int64Var(v, name, 0, help)
	case *float64:
		f.Float64Var(v, name, 0, help)
	case *time.Duration:
		f.DurationVar(v, name, 0, help)
	}
	fl := f.Lookup(name)
	if err := fl.Value.Set(p.Default); err != nil {
		panic(fmt.Sprintf("%s: default %q: %v", p.Flag, p.Default, err))
	}
	fl.DefValue = fl.Value.String()
}
