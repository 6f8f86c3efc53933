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

package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// TestWorkloadDefaults: selectors and template labels are defaulted (not
// for a Job, whose controller makes its selector), a Job's pods restart
// Never unless it says, and PrepareTemplate gives the profile to templates
// that name no scheduler.
func TestWorkloadDefaults(t *testing.T) {
	s, err := decodePlan("s.yaml", []byte(`
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
	var d appsv1.Deployment
	var rs appsv1.ReplicaSet
	var ss appsv1.StatefulSet
	var job batchv1.Job
	var ds appsv1.DaemonSet
	for i, into := range []any{&d, &rs, &ss, &job, &ds} {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(s.Objects[i].Object, into); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, d.Spec.Selector); diff != "" {
		t.Errorf("defaulted selector (-want +got):\n%s", diff)
	}
	if d.Spec.Template.Spec.SchedulerName != "custom-scheduler" || d.Namespace != "default" || d.APIVersion != "apps/v1" || d.Kind != "Deployment" {
		t.Errorf("Deployment %s %s/%s scheduler %q", d.APIVersion, d.Namespace, d.Name, d.Spec.Template.Spec.SchedulerName)
	}
	if rs.Spec.Template.Spec.SchedulerName != "other" || rs.Spec.Selector.MatchLabels["tier"] != "db" || len(rs.Spec.Template.Labels) != 1 {
		t.Errorf("ReplicaSet %+v: want its own scheduler, selector and labels", rs.Spec)
	}
	if ss.Spec.Selector == nil || ss.Spec.Template.Labels["app"] != "db" {
		t.Errorf("StatefulSet %+v: want a defaulted selector", ss)
	}
	if job.Spec.Selector != nil || job.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("Job %+v: want no selector (its controller makes one) and restartPolicy Never", job)
	}
	if ds.Spec.Selector == nil || ds.Spec.Template.Labels["app"] != "agent" {
		t.Errorf("DaemonSet %+v: want a defaulted selector", ds)
	}
	for _, o := range s.Objects {
		if _, ok := o.Object["status"]; ok {
			t.Errorf("%s %s has a status: the apply step would send it", o.GetKind(), o.GetName())
		}
	}
}

// TestCompileChangesNothing: the plan is built from copies; the scenario
// keeps what the file says (validation only checks).
func TestCompileChangesNothing(t *testing.T) {
	p, err := decodePlan("s.yaml", []byte(`
nodes: [{name: a}]
boundPods: [{name: b, nodeName: a}]
objects:
  - kind: Pod
    metadata: {name: p}
    spec: {containers: [{name: c, image: i}]}
  - kind: Job
    metadata: {name: j}
    spec: {template: {spec: {containers: [{name: c, image: i}]}}}
steps:
  - delete: {kind: Pod, name: p}
`), []string{"custom-scheduler"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Scenario.Objects[0]["metadata"].(map[string]interface{})["namespace"]; ok {
		t.Errorf("the scenario's Pod got a namespace: %v", p.Scenario.Objects[0])
	}
	if p.Scenario.BoundPods[0].Namespace != "" || p.Scenario.Steps[0].Delete.Namespace != "" {
		t.Errorf("the scenario's bound pod or step got a namespace: %+v, %+v", p.Scenario.BoundPods[0], p.Scenario.Steps[0].Delete)
	}
	want := workload.ObjectRef{APIVersion: "v1", Kind: "Pod", Namespace: "default", Name: "p"}
	if diff := cmp.Diff(want, *p.Steps[0].Delete); diff != "" {
		t.Errorf("the plan's step (-want +got):\n%s", diff)
	}
	if got := p.Objects[0].GetNamespace(); got != "default" {
		t.Errorf("the plan's Pod in %q, want default", got)
	}
}

// TestOtherKindsAsWritten: a kind outside the kind table is applied as
// written, with only its name and namespace checked.
func TestOtherKindsAsWritten(t *testing.T) {
	p, err := decodePlan("s.yaml", []byte(`
nodes: [{name: a}]
objects:
  - apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: high}
    value: 1000
  - apiVersion: example.com/v1
    kind: Widget
    metadata: {name: w, namespace: team-a}
    spec: {size: 3, enabled: true}
steps:
  - delete: {kind: PriorityClass, name: high}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Objects) != 2 || p.Objects[0].Object["value"] != int64(1000) && p.Objects[0].Object["value"] != float64(1000) {
		t.Fatalf("objects %v", p.Objects)
	}
	if diff := cmp.Diff(map[string]interface{}{"size": float64(3), "enabled": true}, p.Objects[1].Object["spec"]); diff != "" {
		t.Errorf("Widget spec (-want +got):\n%s", diff)
	}
	if p.Objects[0].GetNamespace() != "" {
		t.Errorf("PriorityClass got namespace %q: the apply step knows whether a kind is namespaced", p.Objects[0].GetNamespace())
	}
	if got := p.Steps[0].Delete.APIVersion; got != "scheduling.k8s.io/v1" {
		t.Errorf("step apiVersion %q", got)
	}
	_, err = decodePlan("s.yaml", []byte("nodes: [{name: a}]\nobjects:\n- {kind: Widget, metadata: {name: w}}\n- {apiVersion: example.com/v1, kind: Widget, metadata: {name: W_1, namespace: A}}\n"), nil)
	for _, want := range []string{"objects[0].apiVersion: Required value", "objects[1].metadata.name: Invalid value", "objects[1].metadata.namespace: Invalid value"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}
