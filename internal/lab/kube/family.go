package kube

import (
	"context"
	"fmt"
	"net"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// ipv6 says whether the lab dials IPv6 (ip_family ipv6, or dual, which
// dials IPv6): its peers dial pods', Services' and nodes' IPv6 addresses.
func (b *Build) ipv6() bool { return b.Build != nil && b.Conditions.DialsIPv6() }

// isIPv6 says whether s is an IPv6 address or CIDR.
func isIPv6(s string) bool {
	if ip, _, err := net.ParseCIDR(s); err == nil {
		return ip.To4() == nil
	}
	ip := net.ParseIP(s)
	return ip != nil && ip.To4() == nil
}

// pickFamily is the first of addrs in the family asked (v6 or not), ""
// when none is: an object's addresses of both families on a dual-stack
// cluster (PodIPs, HostIPs, ClusterIPs, a node's InternalIPs).
func pickFamily(addrs []string, v6 bool) string {
	for _, a := range addrs {
		if a != "" && isIPv6(a) == v6 {
			return a
		}
	}
	return ""
}

// podAddrs are a running pod's pod IP and host IP in the family asked,
// from its status' lists of both (PodIP and HostIP hold the first only).
func podAddrs(p *corev1.Pod, v6 bool) (podIP, hostIP string) {
	pods, hosts := []string{p.Status.PodIP}, []string{p.Status.HostIP}
	for _, a := range p.Status.PodIPs {
		pods = append(pods, a.IP)
	}
	for _, a := range p.Status.HostIPs {
		hosts = append(hosts, a.IP)
	}
	return pickFamily(pods, v6), pickFamily(hosts, v6)
}

// serviceFamilies makes a Service dial the family asked: ipv6 a
// single-stack IPv6 Service, dual one of both families with IPv6 first
// (its ClusterIP, what Spec.ClusterIP says, is then IPv6); ipv4 leaves the
// cluster's default (its first family).
func serviceFamilies(svc *corev1.Service, family string) {
	switch family {
	case conditions.IPv6:
		p := corev1.IPFamilyPolicySingleStack
		svc.Spec.IPFamilyPolicy, svc.Spec.IPFamilies = &p, []corev1.IPFamily{corev1.IPv6Protocol}
	case conditions.Dual:
		p := corev1.IPFamilyPolicyPreferDualStack
		svc.Spec.IPFamilyPolicy, svc.Spec.IPFamilies = &p, []corev1.IPFamily{corev1.IPv6Protocol, corev1.IPv4Protocol}
	}
}

// clusterFamily is what the nodes' pod CIDRs say of the cluster: ipv4,
// ipv6 or dual ("" when no node has a pod CIDR, as with a CNI that
// allocates pods' addresses itself).
func clusterFamily(nodes []corev1.Node) string {
	var v4, v6 bool
	for _, n := range nodes {
		for _, c := range append([]string{n.Spec.PodCIDR}, n.Spec.PodCIDRs...) {
			if c == "" {
				continue
			}
			if isIPv6(c) {
				v6 = true
			} else {
				v4 = true
			}
		}
	}
	switch {
	case v4 && v6:
		return conditions.Dual
	case v6:
		return conditions.IPv6
	case v4:
		return conditions.IPv4
	}
	return ""
}

// checkIPv6 refuses, before any pod is made, a lab dialling IPv6 on a
// cluster whose pods have no IPv6 address: no node has an IPv6 pod CIDR
// and no running pod an IPv6 pod IP (a CNI that allocates addresses
// itself leaves the nodes' pod CIDRs empty).
func checkIPv6(ctx context.Context, c *Conn, field, cluster string) error {
	list := &corev1.NodeList{}
	if err := c.list(ctx, c.core, "", "nodes", list); err != nil {
		return fmt.Errorf("kubernetes: list nodes: %w", err)
	}
	if f := clusterFamily(list.Items); f == conditions.Dual || f == conditions.IPv6 {
		return nil
	}
	pods := &corev1.PodList{}
	if err := c.list(ctx, c.core, "kube-system", "pods", pods); err == nil {
		for _, p := range pods.Items {
			if p.Spec.HostNetwork {
				continue
			}
			if ip, _ := podAddrs(&p, true); ip != "" {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: cluster %s is IPv4 only (its pods have no IPv6 address)", field, cluster)
}
