/*
Copyright The adminsched scheduler-plugins Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package playground

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestWorkloadDefaults: selectors and template labels are defaulted (not
// for a Job, whose controller makes its selector), a Job's pods restart
// Never unless it says, and PrepareTemplate gives the profile to templates
// that name no scheduler.
func TestWorkloadDefaults(t *testing.T) {
	s, err := Decode("s.yaml", []byte(`
nodes: [{name: a}]
objects:
  - kind: Deployment
    metadata: {name: web}
    spec:
      replicas: 2
      template:
        spec:
          containers: [{name: c, image: i}]
  - apiVersion: apps/v1
    kind: ReplicaSet
    metadata: {name: rs, namespace: team-a}
    spec:
      selector: {matchLabels: {tier: db}}
      template:
        metadata: {labels: {tier: db}}
        spec:
          schedulerName: other
          containers: [{name: c, image: i}]
  - kind: StatefulSet
    metadata: {name: db}
    spec: {template: {spec: {containers: [{name: c, image: i}]}}}
  - kind: Job
    metadata: {name: batch}
    spec: {completions: 3, template: {spec: {containers: [{name: c, image: i}]}}}
  - kind: DaemonSet
    metadata: {name: agent}
    spec: {template: {spec: {containers: [{name: c, image: i}]}}}
`), []string{"custom-scheduler", "other"})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := s.Workloads(nil)
	if err != nil {
		t.Fatal(err)
	}
	d := ws[0].Deployment
	if diff := cmp.Diff(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, d.Spec.Selector); diff != "" {
		t.Errorf("defaulted selector (-want +got):\n%s", diff)
	}
	PrepareTemplate(&d.Spec.Template, "custom-scheduler")
	if d.Spec.Template.Spec.SchedulerName != "custom-scheduler" || d.Namespace != "default" {
		t.Errorf("Deployment %s/%s scheduler %q", d.Namespace, d.Name, d.Spec.Template.Spec.SchedulerName)
	}
	rs := ws[1].ReplicaSet
	PrepareTemplate(&rs.Spec.Template, "custom-scheduler")
	if rs.Spec.Template.Spec.SchedulerName != "other" || rs.Spec.Selector.MatchLabels["tier"] != "db" || len(rs.Spec.Template.Labels) != 1 {
		t.Errorf("ReplicaSet %+v: want its own scheduler, selector and labels", rs.Spec)
	}
	if ss := ws[2].StatefulSet; ss == nil || ss.Spec.Selector == nil || ss.Spec.Template.Labels["app"] != "db" {
		t.Errorf("StatefulSet %+v: want a defaulted selector", ss)
	}
	if job := ws[3].Job; job == nil || job.Spec.Selector != nil || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("Job %+v: want no selector (its controller makes one) and restartPolicy Never", job)
	}
	if ds := ws[4].DaemonSet; ds == nil || ds.Spec.Selector == nil || ds.Spec.Template.Labels["app"] != "agent" {
		t.Errorf("DaemonSet %+v: want a defaulted selector", ds)
	}
}

func TestPreparePod(t *testing.T) {
	tests := []struct {
		name          string
		pod           corev1.Pod
		wantNamespace string
		wantScheduler string
	}{
		{name: "defaults", wantNamespace: "default", wantScheduler: "custom-scheduler"},
		{name: "own scheduler", pod: corev1.Pod{Spec: corev1.PodSpec{SchedulerName: "x"}}, wantNamespace: "default", wantScheduler: "x"},
		{name: "bound", pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: "a"}}, wantNamespace: "ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			PreparePod(&tt.pod, "custom-scheduler")
			if diff := cmp.Diff([]string{tt.wantNamespace, tt.wantScheduler}, []string{tt.pod.Namespace, tt.pod.Spec.SchedulerName}); diff != "" {
				t.Errorf("namespace, scheduler (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRewriteSchedulerConfig(t *testing.T) {
	in := []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: true
  resourceName: custom-scheduler
clientConnection:
  qps: 50
profiles:
  - schedulerName: custom-scheduler
`)
	out, err := RewriteSchedulerConfig(in, "/tmp/kubeconfig")
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: kubescheduler.config.k8s.io/v1
clientConnection:
  kubeconfig: /tmp/kubeconfig
  qps: 50
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
  resourceName: custom-scheduler
profiles:
- schedulerName: custom-scheduler
`
	if diff := cmp.Diff(want, string(out)); diff != "" {
		t.Errorf("rewritten config (-want +got):\n%s", diff)
	}
	if _, err := RewriteSchedulerConfig([]byte("profiles: ["), "k"); err == nil {
		t.Error("malformed YAML: no error")
	}
}

// TestNodeAnnotations: NodeObjects expands the placeholders at the time it
// is given and gives every node its own copy of its spec's annotations.
func TestNodeAnnotations(t *testing.T) {
	s, err := Decode("s.yaml", []byte(`
nodes:
  - name: maint
    count: 3
    annotations:
      scheduling.adminsched.io/maintenance-window: "${now+2h}/${now+4h}"
      example.com/team: infra
  - name: plain
  - name: fixed
    annotations: {scheduling.adminsched.io/maintenance-window: "2030-01-01T00:00:00Z/2030-01-01T01:00:00Z"}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2031, time.March, 4, 8, 15, 30, 999_999_999, time.UTC)
	nodes := s.NodeObjects(now)
	got := map[string]map[string]string{}
	for _, n := range nodes {
		got[n.Name] = n.Annotations
	}
	maint := map[string]string{
		"scheduling.adminsched.io/maintenance-window": "2031-03-04T10:15:30Z/2031-03-04T12:15:30Z",
		"example.com/team":                            "infra",
	}
	want := map[string]map[string]string{
		"maint-1": maint,
		"maint-2": maint,
		"maint-3": maint,
		"plain":   nil,
		"fixed":   {"scheduling.adminsched.io/maintenance-window": "2030-01-01T00:00:00Z/2030-01-01T01:00:00Z"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	// Every node has its own map, and none is the spec's.
	nodes[0].Annotations["example.com/team"] = "changed"
	nodes[0].Annotations["example.com/added"] = "x"
	if diff := cmp.Diff(maint, nodes[1].Annotations); diff != "" {
		t.Errorf("changing maint-1's annotations changed maint-2's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(maint, nodes[2].Annotations); diff != "" {
		t.Errorf("changing maint-1's annotations changed maint-3's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff("${now+2h}/${now+4h}", s.Nodes[0].Annotations["scheduling.adminsched.io/maintenance-window"]); diff != "" {
		t.Errorf("the spec's annotation (-want +got):\n%s", diff)
	}
	if _, ok := s.Nodes[0].Annotations["example.com/added"]; ok {
		t.Errorf("changing maint-1's annotations changed the spec's")
	}

	// Made again later, the same scenario gives later times.
	later := s.NodeObjects(now.Add(24 * time.Hour))
	if diff := cmp.Diff("2031-03-05T10:15:30Z/2031-03-05T12:15:30Z", later[0].Annotations["scheduling.adminsched.io/maintenance-window"]); diff != "" {
		t.Errorf("a day later (-want +got):\n%s", diff)
	}
}
