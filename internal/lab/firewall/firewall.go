// Package firewall adds iptables rules inside a lab namespace. Every rule
// carries a comment naming cnperf and its lab, so a person reading
// iptables-save can tell whose it is and cnperf can find it again.
package firewall

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/coreos/go-iptables/iptables"

	"github.com/cnperf/cnperf/internal/lab/netnsutil"
)

// Firewall edits the IPv4 tables of one named namespace.
type Firewall struct {
	ns      string
	comment string
}

// New returns a Firewall for the namespace ns whose rules carry comment.
func New(ns, comment string) *Firewall { return &Firewall{ns: ns, comment: comment} }

// Available reports whether the iptables binary is installed.
func Available() error {
	if _, err := exec.LookPath("iptables"); err != nil {
		return fmt.Errorf("iptables is not installed (Debian package iptables): %w", err)
	}
	return nil
}

// do runs fn with an iptables handle inside the namespace: go-iptables execs
// the iptables binary, and a child started on a thread inside the namespace
// inherits it.
func (f *Firewall) do(fn func(ipt *iptables.IPTables) error) error {
	return netnsutil.Do(f.ns, func() error {
		ipt, err := iptables.New()
		if err != nil {
			return fmt.Errorf("iptables in %s: %w", f.ns, err)
		}
		return fn(ipt)
	})
}

// NewChain creates a chain (an existing one is kept).
func (f *Firewall) NewChain(table, chain string) error {
	return f.do(func(ipt *iptables.IPTables) error {
		ok, err := ipt.ChainExists(table, chain)
		if err != nil {
			return fmt.Errorf("check chain %s/%s in %s: %w", table, chain, f.ns, err)
		}
		if ok {
			return nil
		}
		if err := ipt.NewChain(table, chain); err != nil {
			return fmt.Errorf("create chain %s/%s in %s: %w", table, chain, f.ns, err)
		}
		return nil
	})
}

// Append adds a rule at the end of table/chain with cnperf's comment.
func (f *Firewall) Append(table, chain string, spec ...string) error {
	full := append(append([]string{}, spec...), "-m", "comment", "--comment", f.comment)
	return f.do(func(ipt *iptables.IPTables) error {
		if err := ipt.AppendUnique(table, chain, full...); err != nil {
			return fmt.Errorf("append to %s/%s in %s: %w", table, chain, f.ns, err)
		}
		return nil
	})
}

// AppendAll adds rules at the end of table/chain, each with cnperf's
// comment, in one iptables-restore run (--noflush keeps what is there):
// one program run however many rules. The rules are new ones; unlike
// Append it does not skip a rule that exists.
func (f *Firewall) AppendAll(table, chain string, rules [][]string) error {
	if len(rules) == 0 {
		return nil
	}
	var in strings.Builder
	fmt.Fprintf(&in, "*%s\n", table)
	for _, r := range rules {
		fmt.Fprintf(&in, "-A %s %s -m comment --comment %q\n", chain, strings.Join(r, " "), f.comment)
	}
	in.WriteString("COMMIT\n")
	return netnsutil.Do(f.ns, func() error {
		cmd := exec.Command("iptables-restore", "--noflush")
		cmd.Stdin = strings.NewReader(in.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("append %d rules to %s/%s in %s: %v: %s", len(rules), table, chain, f.ns, err, strings.TrimSpace(string(out)))
		}
		return nil
	})
}
