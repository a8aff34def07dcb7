package kube

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cnperf/cnperf/internal/record"
)

func TestCheckPodSetup(t *testing.T) {
	for _, tc := range []struct {
		clusters, bursts []int
		reps             int
		want             string
	}{
		{[]int{0}, []int{1, 10, 50}, 3, ""},
		{nil, []int{1}, 1, "clusters: 0 given"},
		{make([]int, 9), []int{1}, 1, "clusters: 9 given"},
		{[]int{0}, nil, 1, "--bursts: 0 sizes"},
		{[]int{0}, make([]int, 9), 1, "--bursts: 9 sizes"},
		{[]int{0}, []int{0}, 1, "--bursts 0: a burst is 1 to 100"},
		{[]int{0}, []int{101}, 1, "--bursts 101"},
		{[]int{0}, []int{1}, 0, "--repetitions 0"},
		{[]int{0}, []int{1}, 101, "--repetitions 101"},
		{make([]int, 8), []int{100, 100, 100}, 100, "240000 pods, at most 20000"},
	} {
		err := CheckPodSetup(tc.clusters, tc.bursts, tc.reps)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckPodSetup(%d clusters, %v, %d) = %v, want %q", len(tc.clusters), tc.bursts, tc.reps, err, tc.want)
		}
	}
}

func podWith(node, ip string, conds ...corev1.PodConditionType) *corev1.Pod {
	p := &corev1.Pod{Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{PodIP: ip}}
	for _, c := range conds {
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue})
	}
	return p
}

func TestTimeline(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type ev struct {
		typ watch.EventType
		pod *corev1.Pod
		ms  int
	}
	for _, tc := range []struct {
		name                         string
		events                       []ev
		sched, ready, first, deleted float64 // -1: nil
	}{
		{"every step", []ev{
			{watch.Added, podWith("", ""), 1},
			{watch.Modified, podWith("node1", "", corev1.PodScheduled), 4},
			{watch.Modified, podWith("node1", "", corev1.PodScheduled), 6},
			{watch.Modified, podWith("node1", "198.18.65.7", corev1.PodScheduled, corev1.PodReadyToStartContainers), 54},
			{watch.Modified, podWith("node1", "198.18.65.7", corev1.PodScheduled, corev1.PodReadyToStartContainers, corev1.PodReady), 90},
			{watch.Deleted, podWith("node1", "198.18.65.7"), 300},
		}, 4, 50, 56, 100},
		{"scheduling missed: no later than ready", []ev{
			{watch.Modified, podWith("", "198.18.65.8", corev1.PodReadyToStartContainers), 30},
		}, 30, 0, 32, -1},
		{"never ready", []ev{
			{watch.Added, podWith("node1", ""), 2},
		}, 2, -1, -1, -1},
	} {
		var tl timeline
		tl.created = t0
		for _, e := range tc.events {
			tl.observe(e.typ, e.pod, at(e.ms))
		}
		if tl.ip != "" {
			tl.first = tl.scheduled.Add(time.Duration(tc.first) * time.Millisecond)
		}
		if !tl.gone.IsZero() {
			tl.deleteSent = at(200)
		}
		s := tl.sample()
		for _, c := range []struct {
			what string
			got  *float64
			want float64
		}{{"scheduled", s.ScheduledMS, tc.sched}, {"ready", s.ReadyMS, tc.ready}, {"first", s.FirstMS, tc.first}, {"deletion", s.DeleteMS, tc.deleted}} {
			if (c.got == nil) != (c.want < 0) || c.got != nil && *c.got != c.want {
				t.Errorf("%s: %s = %v, want %v", tc.name, c.what, c.got, c.want)
			}
		}
	}
}

func TestSetupTable(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	m := PodSetup{Bursts: []int{2}, Repetitions: 2,
		Clusters: []SetupRecord{{Name: "a", Kube: &record.Kube{CNI: "flannel", CNIBackend: "vxlan"}}}}
	// Repetition 1: ready 10 and 30 (p50 20, mean 20); repetition 2: 40 and 40.
	for r, vals := range [][2]float64{{10, 30}, {40, 40}} {
		for i, v := range vals {
			m.Samples = append(m.Samples, PodSetupTime{Cluster: "a", Burst: 2, Repetition: r + 1, Pod: podSetupName(i),
				ReadyMS: f(v), FirstMS: f(v + 1)})
		}
	}
	rows := SetupTable(m)
	if len(rows) != 1 || rows[0].CNI != "flannel/vxlan" {
		t.Fatalf("rows = %+v", rows)
	}
	ready := rows[0].Steps[0][0]
	if ready.N != 2 || ready.Mean != 30 || !(ready.Lo < 30 && ready.Hi > 30) {
		t.Errorf("ready p50 = %+v, want mean 30 over 2 repetitions with an interval", ready)
	}
	if first := rows[0].Steps[1][1]; first.Mean != 31 {
		t.Errorf("first packet mean = %+v, want 31", first)
	}
	if del := rows[0].Steps[2][0]; del.N != 0 {
		t.Errorf("deletion = %+v, want no repetitions", del)
	}
	var b bytes.Buffer
	WriteSetupTable(&b, m)
	if !strings.Contains(b.String(), "a            flannel/vxlan") || !strings.Contains(b.String(), "30.0 [") {
		t.Errorf("table:\n%s", b.String())
	}
}
