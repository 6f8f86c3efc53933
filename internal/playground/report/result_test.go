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

package report

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	configv1 "github.com/adminsched/scheduler-plugins/apis/config/v1"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
	"github.com/adminsched/scheduler-plugins/pkg/maintenancewindow/window"
)

func TestSpread(t *testing.T) {
	tests := []struct {
		name   string
		counts []int
		want   int
	}{
		{"none", nil, 0},
		{"one node", []int{4}, 0},
		{"even but one", []int{3, 2, 2}, 1},
		{"empty node", []int{0, 7, 1}, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Spread(tt.counts)); diff != "" {
				t.Errorf("Spread(%v) (-want +got):\n%s", tt.counts, diff)
			}
		})
	}
}

func pod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func boundPod(ns, name, node string) *corev1.Pod {
	p := pod(ns, name)
	p.Spec.NodeName = node
	return p
}

func withScheduled(p *corev1.Pod, status corev1.ConditionStatus, reason, message string) *corev1.Pod {
	p.Status.Conditions = append(p.Status.Conditions,
		corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "NotReady"},
		corev1.PodCondition{Type: corev1.PodScheduled, Status: status, Reason: reason, Message: message})
	return p
}

func TestCompute(t *testing.T) {
	const cpu = "0/3 nodes are available: 3 Insufficient cpu."
	nodes := []string{"n1", "n2", "n3"}
	tests := []struct {
		name   string
		pods   []workload.OwnedPod
		events map[types.NamespacedName]string
		want   Result
	}{{
		name: "no pods",
		want: Result{Nodes: []NodeResult{{Name: "n1", Pods: 0}, {Name: "n2", Pods: 0}, {Name: "n3", Pods: 0}}, Pods: []PodResult{}},
	}, {
		name: "bound and unschedulable, in the order given",
		pods: []workload.OwnedPod{
			{Pod: boundPod("default", "a", "n1"), Object: "Pod/a"},
			{Pod: boundPod("default", "web-x", "n1"), Object: "Deployment/web"},
			{Pod: boundPod("default", "web-y", "n2"), Object: "Deployment/web"},
			{Pod: withScheduled(pod("team", "d"), corev1.ConditionFalse, corev1.PodReasonUnschedulable, cpu), Object: "Job/d"},
		},
		events: map[types.NamespacedName]string{{Namespace: "team", Name: "d"}: "0/3 nodes are available: 2 Insufficient cpu."},
		want: Result{
			Nodes: []NodeResult{{Name: "n1", Pods: 2}, {Name: "n2", Pods: 1}, {Name: "n3", Pods: 0}},
			Pods: []PodResult{
				{Namespace: "default", Name: "a", Object: "Pod/a", Node: "n1"},
				{Namespace: "default", Name: "web-x", Object: "Deployment/web", Node: "n1"},
				{Namespace: "default", Name: "web-y", Object: "Deployment/web", Node: "n2"},
				{Namespace: "team", Name: "d", Object: "Job/d", Reason: "Unschedulable: " + cpu + " (last FailedScheduling event: 0/3 nodes are available: 2 Insufficient cpu.)"},
			},
			Spread: 2,
		},
	}, {
		name: "an event saying what the condition says is not repeated",
		pods: []workload.OwnedPod{{Pod: withScheduled(pod("team", "d"), corev1.ConditionFalse, corev1.PodReasonUnschedulable, cpu), Object: "Job/d"}},
		events: map[types.NamespacedName]string{
			{Namespace: "team", Name: "d"}:  cpu,
			{Namespace: "other", Name: "d"}: "another pod's event",
		},
		want: Result{
			Nodes: []NodeResult{{Name: "n1", Pods: 0}, {Name: "n2", Pods: 0}, {Name: "n3", Pods: 0}},
			Pods:  []PodResult{{Namespace: "team", Name: "d", Object: "Job/d", Reason: "Unschedulable: " + cpu}},
		},
	}, {
		name: "pending, with and without an event; a bound pod's event is ignored",
		pods: []workload.OwnedPod{
			{Pod: pod("ns", "quiet"), Object: "Pod/quiet"},
			{Pod: pod("ns", "evented"), Object: "Pod/evented"},
			{Pod: withScheduled(pod("ns", "gated"), corev1.ConditionFalse, corev1.PodReasonSchedulingGated, ""), Object: "Pod/gated"},
			{Pod: boundPod("ns", "late", "n3"), Object: "Pod/late"},
		},
		events: map[types.NamespacedName]string{
			{Namespace: "ns", Name: "evented"}: "0/3 nodes are available",
			{Namespace: "ns", Name: "late"}:    "0/3 nodes are available",
		},
		want: Result{
			Nodes: []NodeResult{{Name: "n1", Pods: 0}, {Name: "n2", Pods: 0}, {Name: "n3", Pods: 1}},
			Pods: []PodResult{
				{Namespace: "ns", Name: "quiet", Object: "Pod/quiet", Reason: "pending: the scheduler has not reported on it"},
				{Namespace: "ns", Name: "evented", Object: "Pod/evented", Reason: "pending: the scheduler has not reported on it (last FailedScheduling event: 0/3 nodes are available)"},
				{Namespace: "ns", Name: "gated", Object: "Pod/gated", Reason: "SchedulingGated"},
				{Namespace: "ns", Name: "late", Object: "Pod/late", Node: "n3"},
			},
			Spread: 1,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Compute(nodes, tt.pods, tt.events)); diff != "" {
				t.Errorf("Compute (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPerNode(t *testing.T) {
	tests := []struct {
		name  string
		nodes []string
		pods  []workload.OwnedPod
		want  []NodeResult
	}{
		{"no nodes", nil, []workload.OwnedPod{{Pod: boundPod("ns", "a", "n1")}}, []NodeResult{}},
		{"no pods", []string{"n2", "n1"}, nil, []NodeResult{{Name: "n2", Pods: 0}, {Name: "n1", Pods: 0}}},
		{
			name:  "in the order of nodes; unbound pods and unknown nodes not counted",
			nodes: []string{"n2", "n1"},
			pods: []workload.OwnedPod{
				{Pod: boundPod("ns", "a", "n1"), Object: "Pod/a"},
				{Pod: boundPod("ns", "b", "n1"), Object: "Pod/b"},
				{Pod: boundPod("ns", "c", "gone"), Object: "Pod/c"},
				{Pod: pod("ns", "d"), Object: "Pod/d"},
			},
			want: []NodeResult{{Name: "n2", Pods: 0}, {Name: "n1", Pods: 2}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, PerNode(tt.nodes, tt.pods)); diff != "" {
				t.Errorf("PerNode (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPure keeps the package pure, as its doc says: no client-go, no
// embedded cluster, nothing of the engine (the engine imports report) nor
// of another step; only the steps' shared words (workload).
func TestPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	banned := []string{"k8s.io/client-go/", "github.com/adminsched/scheduler-plugins/internal/localcluster",
		"github.com/adminsched/scheduler-plugins/internal/playground"}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range parsed.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "github.com/adminsched/scheduler-plugins/internal/playground/workload" {
				continue
			}
			for _, b := range banned {
				if path == b || strings.HasPrefix(path, strings.TrimSuffix(b, "/")+"/") {
					t.Errorf("%s imports %s: report is pure (no client, no cluster) and imports nothing of the playground but workload", f, path)
				}
			}
		}
	}
	// Nor through what it imports (it once linked client-go and the
	// scheduler through the attempt recorder).
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "k8s.io/client-go/") || strings.HasPrefix(dep, "k8s.io/kubernetes/") || strings.HasPrefix(dep, "github.com/adminsched/scheduler-plugins/internal/localcluster") {
			t.Errorf("the report package links %s", dep)
		}
	}
}

func requesting(p *corev1.Pod, cpu, memory string) *corev1.Pod {
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "c", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}}})
	return p
}

func TestNodeOf(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{corev1.LabelTopologyZone: "z1"},
			Annotations: map[string]string{maintenanceAnnotation: "2026-01-01T00:00:00Z/2026-01-01T02:00:00Z", "other": "x"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{
			{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
			{Key: "spot", Effect: corev1.TaintEffectPreferNoSchedule},
		}},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
			Conditions: []corev1.NodeCondition{
				{Type: corev1.NodeReady, Status: corev1.ConditionFalse},
				{Type: "DrainInProgress", Status: corev1.ConditionTrue},
				{Type: "Drained", Status: corev1.ConditionFalse},
				{Type: "MaintenancePlanned", Status: corev1.ConditionUnknown},
				{Type: "MaintenanceInProgress", Status: corev1.ConditionTrue},
				{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionTrue},
			},
		},
	}
	// An init container asking more than the containers sets the pod's
	// request, as the scheduler counts it.
	withInit := requesting(boundPod("ns", "init", "n1"), "100m", "64Mi")
	withInit.Spec.InitContainers = []corev1.Container{{Name: "i", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}
	done := requesting(boundPod("ns", "done", "n1"), "2", "1Gi")
	done.Status.Phase = corev1.PodSucceeded
	pods := []workload.OwnedPod{
		{Pod: requesting(boundPod("ns", "a", "n1"), "250m", "128Mi")},
		{Pod: requesting(boundPod("ns", "b", "n1"), "500m", "256Mi")},
		{Pod: withInit},
		{Pod: done},
		{Pod: requesting(boundPod("ns", "elsewhere", "n2"), "3", "2Gi")},
		{Pod: requesting(pod("ns", "pending"), "3", "2Gi")},
	}
	want := NodeResult{
		Name: "n1", Pods: 4, Labels: map[string]string{corev1.LabelTopologyZone: "z1"},
		CPU:         Use{Requested: 250 + 500 + 1000, Allocatable: 4000},
		Memory:      Use{Requested: (128 + 256 + 64) << 20, Allocatable: 8 << 30},
		Taints:      []string{"dedicated=gpu:NoSchedule", "spot:PreferNoSchedule"},
		Conditions:  []string{"Ready=False", "DrainInProgress", "MaintenanceInProgress"},
		Maintenance: "2026-01-01T00:00:00Z/2026-01-01T02:00:00Z",
	}
	got := NodeOf(node, pods)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NodeOf (-want +got):\n%s", diff)
	}
	got.Labels["changed"] = "yes"
	if _, ok := node.Labels["changed"]; ok {
		t.Error("NodeOf shares the node's labels: a change to the result changed the node")
	}
	// A node without any of it: no facts but its allocatable.
	bare := NodeOf(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}, pods)
	if diff := cmp.Diff(NodeResult{Name: "n2", Pods: 1, CPU: Use{Requested: 3000}, Memory: Use{Requested: 2 << 30}}, bare); diff != "" {
		t.Errorf("NodeOf a bare node (-want +got):\n%s", diff)
	}
}

func TestFillNodes(t *testing.T) {
	nodes := []corev1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"l": "1"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n2", Labels: map[string]string{"l": "2"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "not-in-the-results"}},
	}
	pods := []workload.OwnedPod{
		{Pod: requesting(boundPod("ns", "a", "n1"), "1", "1Mi")},
		{Pod: requesting(boundPod("ns", "b", "n2"), "2", "2Mi")},
		{Pod: requesting(boundPod("ns", "c", "n2"), "3", "3Mi")},
		{Pod: requesting(boundPod("ns", "d", "gone"), "4", "4Mi")},
	}
	rs := PerNode([]string{"n2", "gone", "n1"}, pods)
	FillNodes(rs, nodes, pods)
	want := []NodeResult{
		{Name: "n2", Pods: 2, Labels: map[string]string{"l": "2"}, CPU: Use{Requested: 5000}, Memory: Use{Requested: 5 << 20}},
		// Deleted: the count stays, no facts.
		{Name: "gone", Pods: 1},
		{Name: "n1", Pods: 1, Labels: map[string]string{"l": "1"}, CPU: Use{Requested: 1000}, Memory: Use{Requested: 1 << 20}},
	}
	if diff := cmp.Diff(want, rs); diff != "" {
		t.Errorf("FillNodes (-want +got):\n%s", diff)
	}
}

// TestNodeFactsNames keeps the report's copies of the maintenance window
// plugin's annotation and conditions equal to the plugin's.
func TestNodeFactsNames(t *testing.T) {
	if maintenanceAnnotation != configv1.DefaultMaintenanceWindowAnnotation {
		t.Errorf("maintenanceAnnotation %q, the plugin's default %q", maintenanceAnnotation, configv1.DefaultMaintenanceWindowAnnotation)
	}
	want := sets.New(window.ConditionDrainInProgress, window.ConditionDrained, window.ConditionMaintenanceInProgress, window.ConditionMaintenancePlanned)
	if !want.Equal(lifecycleConditions) {
		t.Errorf("lifecycleConditions %v, the plugin's %v", sets.List(lifecycleConditions), sets.List(want))
	}
}
