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
// scheduler can know it when the replicas come.
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
      replicas: 2
      template:
        metadata: {labels: {app: web}}
        spec: {containers: [{name: c, image: i}]}
`), []string{"custom-scheduler"})
	if err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	a := &Applier{Client: client, SchedulerName: "custom-scheduler"}
	pods, err := a.Apply(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) != 2 {
		t.Errorf("pods %v, want the Deployment's 2 replicas (a Service has none)", pods)
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
	want := []string{"namespaces", "services", "deployments", "replicasets", "pods", "pods"}
	if diff := cmp.Diff(want, creates); diff != "" {
		t.Errorf("objects created, in order (-want +got):\n%s", diff)
	}
	selector := labels.SelectorFromSet(svc.Spec.Selector)
	for _, ref := range pods {
		pod, err := client.CoreV1().Pods(ref.Namespace).Get(context.Background(), ref.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("pod %v: %v", ref, err)
		}
		if !selector.Matches(labels.Set(pod.Labels)) {
			t.Errorf("pod %v labels %v: the Service does not select it", ref, pod.Labels)
		}
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
