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

package localcluster

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// TestStartedNodeKeepsWhatIsSet: a copy, with allocatable and capacity
// kept; KWOK's defaults only where they are unset.
func TestStartedNodeKeepsWhatIsSet(t *testing.T) {
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3"), corev1.ResourcePods: resource.MustParse("7")}
	in := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a"}},
		Status:     corev1.NodeStatus{Allocatable: res, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse}}},
	}
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	got := StartedNode(in, now)
	if in.Status.Phase != "" || len(in.Status.Conditions) != 1 || len(in.Status.Addresses) != 0 {
		t.Errorf("the node given was changed: %+v", in.Status)
	}
	if got.Status.Phase != corev1.NodeRunning {
		t.Errorf("phase %q, want Running", got.Status.Phase)
	}
	if !cmp.Equal(got.Status.Allocatable, res) {
		t.Errorf("allocatable %v, want %v (as given)", got.Status.Allocatable, res)
	}
	if !cmp.Equal(got.Status.Capacity, kwokDefaultResources) {
		t.Errorf("capacity %v, want KWOK's default %v", got.Status.Capacity, kwokDefaultResources)
	}
	if got.Labels["zone"] != "a" {
		t.Errorf("labels %v lost", got.Labels)
	}
	if len(got.Status.Conditions) != len(kwokNodeConditions) || got.Status.Conditions[0].Status != corev1.ConditionTrue || !got.Status.Conditions[0].LastHeartbeatTime.Time.Equal(now) {
		t.Errorf("conditions %+v, want KWOK's at %v", got.Status.Conditions, now)
	}
	got.Status.Conditions[0].Reason = "changed"
	if kwokNodeConditions[0].Reason == "changed" {
		t.Error("StartedNode shares its conditions with kwokNodeConditions")
	}
}

// TestStartedNode creates a node as the playground did (KWOK's node-start
// stage then starts it) and one made by StartedNode, on the embedded
// cluster. KWOK must take both over, never write the second one's status,
// and both must end with the same status, times aside: when KWOK's stage
// (kwok.yaml) or version changes, StartedNode must follow.
func TestStartedNode(t *testing.T) {
	cp := startCluster(t)
	client, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("50")}
	node := func(name string) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{
				Capacity: res.DeepCopy(), Allocatable: res.DeepCopy(),
				Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady"}},
			},
		}
	}
	started, err := client.CoreV1().Nodes().Create(ctx, StartedNode(node("started"), time.Now()), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created, err := client.CoreV1().Nodes().Create(ctx, node("plain"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// KWOK has taken both nodes over once it has made their leases and
	// started the plain one, created after the other.
	if _, err := WaitNodesManaged(ctx, client, time.Minute, "started", "plain"); err != nil {
		t.Fatal(err)
	}
	var plain *corev1.Node
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, "plain", metav1.GetOptions{})
		if err != nil || n.Status.Phase != corev1.NodeRunning {
			return false, nil
		}
		plain = n
		return true, nil
	})
	if err != nil {
		t.Fatalf("KWOK did not take both nodes over: %v", err)
	}
	// KWOK's stage writes at once; give it a few seconds more to show
	// that it leaves the started node alone.
	time.Sleep(3 * time.Second)
	got, err := client.CoreV1().Nodes().Get(ctx, "started", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.ResourceVersion != started.ResourceVersion {
		t.Errorf("the started node was written after its creation (resourceVersion %s, then %s); managed fields: %+v", started.ResourceVersion, got.ResourceVersion, got.ManagedFields)
	}
	if plain.ResourceVersion == created.ResourceVersion {
		t.Errorf("KWOK started the plain node without writing it (resourceVersion %s)", plain.ResourceVersion)
	}
	want := plain.Status.DeepCopy()
	for i := range want.Addresses {
		if want.Addresses[i].Type == corev1.NodeHostName {
			want.Addresses[i].Address = "started"
		}
	}
	ignoreTimes := cmp.FilterPath(func(p cmp.Path) bool {
		name := p.Last().String()
		return name == ".LastHeartbeatTime" || name == ".LastTransitionTime"
	}, cmp.Ignore())
	if diff := cmp.Diff(want, &got.Status, ignoreTimes); diff != "" {
		t.Errorf("the started node's status differs from what KWOK's node-start stage writes (-KWOK +StartedNode):\n%s", diff)
	}
}
