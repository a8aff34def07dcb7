// Package firewall adds iptables rules inside a lab namespace. Every rule
// carries a comment naming cnperf and its lab, so a person reading
// iptables-save can tell whose it is and cnperf can find it again. A
// Firewall edits one family's tables: IPv4's through iptables, IPv6's
// through ip6tables, whose nat table Docker uses the same way for NAT66
// (ip6tables: true); the rules and the owner mark are the same.
//
// Each iptables program run costs a fork, an exec and a read of the
// namespace's ruleset (about 2 ms on a small server); a lab host's dozen
// rules one by one, each checked before it was added, cost 60 ms. Rules
// therefore go in as batches (Rules), one iptables-restore run for every
// table of a namespace.
package firewall

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/cnperf/cnperf/internal/lab/namespace"
)

// Firewall edits the IPv4 or the IPv6 tables of one named namespace.
type Firewall struct {
	ns      string
	comment string
	v6      bool
}

// New returns a Firewall for the IPv4 tables of the namespace ns whose
// rules carry comment.
func New(ns, comment string) *Firewall { return &Firewall{ns: ns, comment: comment} }

// New6 is New for the namespace's IPv6 tables (ip6tables).
func New6(ns, comment string) *Firewall { return &Firewall{ns: ns, comment: comment, v6: true} }

// ForAddr is New for an IPv4 address or prefix and New6 for an IPv6 one
// (a net.IP's or a CIDR's text), so that a rule builder serves either
// family from the addresses it is given.
func ForAddr(ns, comment, addr string) *Firewall {
	if IsIPv6(addr) {
		return New6(ns, comment)
	}
	return New(ns, comment)
}

// IsIPv6 says whether an address or prefix in text is IPv6's: IPv4 text
// has no colon.
func IsIPv6(addr string) bool { return strings.Contains(addr, ":") }

// IPv6 says whether the Firewall edits the IPv6 tables.
func (f *Firewall) IPv6() bool { return f.v6 }

// binary is the family's program: iptables or ip6tables, with suffix
// ("-restore").
func (f *Firewall) binary(suffix string) string {
	if f.v6 {
		return "ip6tables" + suffix
	}
	return "iptables" + suffix
}

// Available reports whether the iptables binaries are installed, for both
// families (one Debian package carries them).
func Available() error {
	for _, p := range []string{"iptables", "iptables-restore", "ip6tables", "ip6tables-restore"} {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%s is not installed (Debian package iptables): %w", p, err)
		}
	}
	return nil
}

// run runs an iptables program inside the namespace (a child started on a
// thread inside it inherits it), with stdin when it is not empty.
func (f *Firewall) run(stdin string, name string, args ...string) ([]byte, error) {
	var out []byte
	err := namespace.Do(f.ns, func() error {
		cmd := exec.Command(name, args...)
		if stdin != "" {
			cmd.Stdin = strings.NewReader(stdin)
		}
		var err error
		out, err = cmd.CombinedOutput()
		return err
	})
	return out, err
}

// Append adds a rule at the end of table/chain with cnperf's comment,
// unless the chain has that rule already (iptables -C, then -A).
func (f *Firewall) Append(table, chain string, spec ...string) error {
	full := append(append([]string{}, spec...), "-m", "comment", "--comment", f.comment)
	out, err := f.run("", f.binary(""), append([]string{"-w", "-t", table, "-C", chain}, full...)...)
	if err == nil {
		return nil // there already
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		return fmt.Errorf("check rule in %s/%s in %s: %v: %s", table, chain, f.ns, err, strings.TrimSpace(string(out)))
	}
	if out, err := f.run("", f.binary(""), append([]string{"-w", "-t", table, "-A", chain}, full...)...); err != nil {
		return fmt.Errorf("append to %s/%s in %s: %v: %s", table, chain, f.ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Rules is a batch of chains and rules for the namespace's tables, applied
// by Apply in one iptables-restore run (--noflush keeps what is there) in
// the order they were added, table by table. It is for what a mode lays
// out once: a chain it creates must not exist yet (Apply fails, rather than
// flush it as a chain declaration would), and its rules are added without
// checking for copies.
type Rules struct {
	f      *Firewall
	tables []string            // in first use
	lines  map[string][]string // restore lines by table
	n      int
}

// Rules starts a batch for the namespace.
func (f *Firewall) Rules() *Rules { return &Rules{f: f, lines: map[string][]string{}} }

func (r *Rules) add(table, line string) {
	if _, ok := r.lines[table]; !ok {
		r.tables = append(r.tables, table)
	}
	r.lines[table] = append(r.lines[table], line)
	r.n++
}

// NewChain creates a user chain in table.
func (r *Rules) NewChain(table, chain string) { r.add(table, "-N "+chain) }

// Append adds a rule at the end of table/chain with cnperf's comment.
func (r *Rules) Append(table, chain string, spec ...string) {
	full := append(append([]string{"-A", chain}, spec...), "-m", "comment", "--comment", r.f.comment)
	r.add(table, quoteArgs(full))
}

// Restore is the batch as iptables-restore (or ip6tables-restore) reads
// it: each table's lines between "*table" and COMMIT.
func (r *Rules) Restore() string {
	var in strings.Builder
	for _, t := range r.tables {
		fmt.Fprintf(&in, "*%s\n", t)
		for _, l := range r.lines[t] {
			in.WriteString(l)
			in.WriteByte('\n')
		}
		in.WriteString("COMMIT\n")
	}
	return in.String()
}

// Apply runs the batch; an empty one runs nothing. Either every table's
// changes go in or (on an error) none of that table's do.
func (r *Rules) Apply() error {
	if r.n == 0 {
		return nil
	}
	// -w: the legacy backend's tables share one lock across namespaces, so
	// hosts built side by side wait their turn instead of failing.
	prog := r.f.binary("-restore")
	if out, err := r.f.run(r.Restore(), prog, "-w", "--noflush"); err != nil {
		return fmt.Errorf("%s of %d changes to %s in %s: %v: %s", prog, r.n, strings.Join(r.tables, ", "), r.f.ns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// quoteArgs joins arguments for an iptables-restore line, quoting those
// its parser would split (a comment with spaces).
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			a = fmt.Sprintf("%q", a)
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}
