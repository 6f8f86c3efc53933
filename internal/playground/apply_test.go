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
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

// TestApplyService checks that a Service of a scenario is created as
// written, in file order: before the Deployment it selects, so that the
// scheduler can know it when the replicas come. No controller runs here:
// the Deployment has no replicas, and the Pod is bound, so that each is
// settled at once.
func TestApplyService(t *testing.T) {
	s, err := Decode("s.yaml", []byte(`
nodes: [{name: a}]
objects:
  - kind: Service
    metadata: {name: web, namespace: team-a}
    spec:
      selector: {app: web}
      ports: [{port: 80, targetPort: 8080}]
  - kind: Deployment
    metadata: {name: web, namespace: team-a}
    spec:
      replicas: 0
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: i}]}
  - kind: Pod
    metadata: {name: p, namespace: team-a}
    spec: {nodeName: a, containers: [{name: c, image: i}]}
`), []string{"custom-scheduler"})
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	a := &Applier{Client: client, SchedulerName: "custom-scheduler", PollInterval: time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	refs, err := a.Apply(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	wantRefs := []string{"Deployment team-a/web", "Pod team-a/p"}
	var gotRefs []string
	for _, r := range refs {
		gotRefs = append(gotRefs, r.String())
	}
	if diff := cmp.Diff(wantRefs, gotRefs); diff != "" {
		t.Errorf("objects with pods (-want +got):\n%s", diff)
	}

	svc, err := client.CoreV1().Services("team-a").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Service was not created: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"app": "web"}, svc.Spec.Selector); diff != "" {
		t.Errorf("Service selector (-want +got):\n%s", diff)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 80 || svc.Spec.Ports[0].TargetPort.IntValue() != 8080 {
		t.Errorf("Service ports %+v, want 80 -> 8080", svc.Spec.Ports)
	}

	var creates []string
	for _, action := range client.Actions() {
		if c, ok := action.(clienttesting.CreateAction); ok {
			creates = append(creates, c.GetResource().Resource)
		}
	}
	// The controllers make the ReplicaSets and pods of a Deployment.
	want := []string{"namespaces", "services", "deployments", "pods"}
	if diff := cmp.Diff(want, creates); diff != "" {
		t.Errorf("objects created, in order (-want +got):\n%s", diff)
	}
	d, err := client.AppsV1().Deployments("team-a").Get(context.Background(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Spec.Template.Spec.SchedulerName != "custom-scheduler" {
		t.Errorf("Deployment template scheduler %q, want the profile's", d.Spec.Template.Spec.SchedulerName)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Errorf("template labels %v: the Service does not select them", d.Spec.Template.Labels)
	}
}

// TestApplyWaitsForAlive: a wait fails with Alive's error instead of
// waiting for pods no controller will make.
func TestApplyWaitsForAlive(t *testing.T) {
	s, err := Decode("s.yaml", []byte(`
nodes: [{name: a}]
objects:
  - kind: Deployment
    metadata: {name: web}
    spec: {replicas: 2, template: {spec: {containers: [{name: c, image: i}]}}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &Applier{Client: fake.NewClientset(), PollInterval: time.Millisecond, Alive: func() error { return errors.New("kube-controller-manager exited") }}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := a.Apply(ctx, s); err == nil || !strings.Contains(err.Error(), "kube-controller-manager exited") || ctx.Err() != nil {
		t.Errorf("Apply: %v, want the controller-manager's exit, at once", err)
	}
}

// TestCreateNodesNow: CreateNodes expands annotation placeholders with the
// Applier's clock, and the created nodes carry the annotations.
func TestCreateNodesNow(t *testing.T) {
	s, err := Decode("s.yaml", []byte(`
nodes:
  - name: a
    count: 2
    annotations: {scheduling.adminsched.io/maintenance-window: "${now-30m}/${now+1h30m}"}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	now := time.Date(2031, time.March, 4, 8, 15, 30, 0, time.UTC)
	a := &Applier{Client: client, Now: func() time.Time { return now }}
	if err := a.CreateNodes(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a-1", "a-2"} {
		n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"scheduling.adminsched.io/maintenance-window": "2031-03-04T07:45:30Z/2031-03-04T09:45:30Z"}
		if diff := cmp.Diff(want, n.Annotations); diff != "" {
			t.Errorf("node %s annotations (-want +got):\n%s", name, diff)
		}
	}
}
