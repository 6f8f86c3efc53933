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

package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/adminsched/scheduler-plugins/internal/playground/apply"
	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

const maintenanceKey = "scheduling.adminsched.io/maintenance-window"

// secretPod is a pod with everything a snapshot must not take out of the
// cluster: env values, secret references, volumes, annotations, images,
// commands.
func secretPod() *corev1.Pod {
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ops", UID: "ds-uid"}}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "agent-x7k2p", Namespace: "ops",
			Labels:          map[string]string{"app": "agent"},
			Annotations:     map[string]string{"vault.example.com/token": "TOPSECRET-annotation", "kubectl.kubernetes.io/last-applied-configuration": "{\"LASTAPPLIED\":1}"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))},
			Finalizers:      []string{"example.com/FINALIZER"},
		},
		Spec: corev1.PodSpec{
			NodeName:           "n1",
			Priority:           ptr.To[int32](2000001000),
			ServiceAccountName: "SA-NAME",
			ImagePullSecrets:   []corev1.LocalObjectReference{{Name: "PULL-SECRET"}},
			InitContainers: []corev1.Container{
				{Name: "INIT-NAME", Image: "example.com/INIT-IMAGE:1", Command: []string{"INIT-COMMAND"}},
				{Name: "SIDECAR-NAME", Image: "example.com/SIDECAR-IMAGE:1", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m")}}},
			},
			Containers: []corev1.Container{{
				Name: "MAIN-NAME", Image: "example.com/PRIVATE-IMAGE:1", Command: []string{"MAIN-COMMAND"}, Args: []string{"--password=ARG-SECRET"},
				Env: []corev1.EnvVar{
					{Name: "ENV-NAME", Value: "ENV-VALUE"},
					{Name: "FROM-SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "SECRET-REF"}, Key: "SECRET-KEY"}}},
				},
				EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "ENVFROM-SECRET"}}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("999Mi")},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "VOLUME-NAME", MountPath: "/MOUNT-PATH"}},
			}, {Name: "SECOND-NAME", Image: "example.com/SECOND-IMAGE:1"}},
			Volumes:     []corev1.Volume{{Name: "VOLUME-NAME", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "VOLUME-SECRET"}}}},
			Tolerations: []corev1.Toleration{{Key: "TOLERATION-KEY", Operator: corev1.TolerationOpExists}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.1.2.3", HostIP: "192.0.2.7"},
	}
}

func TestBoundPodFromKeepsOnlyAllowedFields(t *testing.T) {
	bp := BoundPodFrom(secretPod())
	want := scenario.BoundPod{
		Namespace: "ops", Name: "agent-x7k2p", NodeName: "n1",
		Labels:         map[string]string{"app": "agent"},
		Owner:          &scenario.Owner{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent"},
		Priority:       ptr.To[int32](2000001000),
		InitContainers: []scenario.ContainerRequests{{}, {Requests: map[corev1.ResourceName]scenario.Quantity{"cpu": "50m"}, Sidecar: true}},
		Containers:     []scenario.ContainerRequests{{Requests: map[corev1.ResourceName]scenario.Quantity{"cpu": "250m", "memory": "128Mi"}}, {}},
	}
	if diff := cmp.Diff(want, bp); diff != "" {
		t.Errorf("BoundPodFrom (-want +got):\n%s", diff)
	}

	var out bytes.Buffer
	if err := scenario.Write(&out, &scenario.Scenario{Nodes: []scenario.NodeSpec{{Name: "n1"}}, BoundPods: []scenario.BoundPod{bp}}, nil); err != nil {
		t.Fatal(err)
	}
	// Every upper-case marker, and the other values above, stay in the
	// cluster.
	for _, leak := range []string{"SECRET", "ENV-", "IMAGE", "COMMAND", "NAME", "VOLUME", "MOUNT", "TOLERATION", "FINALIZER", "LASTAPPLIED",
		"annotation", "vault", "999Mi", "10.1.2.3", "192.0.2.7", "ds-uid", "example.com", "image", "env", "limits"} {
		if strings.Contains(out.String(), leak) {
			t.Errorf("the snapshot contains %q:\n%s", leak, out.String())
		}
	}
}

func TestNodeSpecFrom(t *testing.T) {
	added := metav1.NewTime(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:   "ip-10-0-0-1",
			Labels: map[string]string{"topology.kubernetes.io/zone": "z1", corev1.LabelHostname: "ip-10-0-0-1"},
			Annotations: map[string]string{
				maintenanceKey:                 "2030-01-02T00:00:00Z/2030-01-02T04:00:00Z",
				"node.alpha.kubernetes.io/ttl": "0", "csi.volume.kubernetes.io/nodeid": "NODEID",
			},
		},
		Spec: corev1.NodeSpec{
			Unschedulable: true, ProviderID: "aws:///PROVIDER", PodCIDR: "10.244.1.0/24",
			Taints: []corev1.Taint{{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule, TimeAdded: &added}},
		},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{"cpu": resource.MustParse("4"), "memory": resource.MustParse("16Gi"), "pods": resource.MustParse("110"), "ephemeral-storage": resource.MustParse("100Gi")},
			Allocatable: corev1.ResourceList{"cpu": resource.MustParse("3920m"), "memory": resource.MustParse("15Gi")},
			Addresses:   []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.0.0.1"}},
		},
	}
	want := scenario.NodeSpec{
		Name:          "ip-10-0-0-1",
		Labels:        map[string]string{"topology.kubernetes.io/zone": "z1", corev1.LabelHostname: "ip-10-0-0-1"},
		Annotations:   map[string]string{maintenanceKey: "2030-01-02T00:00:00Z/2030-01-02T04:00:00Z"},
		Taints:        []corev1.Taint{{Key: "node.kubernetes.io/unschedulable", Effect: corev1.TaintEffectNoSchedule}},
		Allocatable:   scenario.Allocatable{CPU: "3920m", Memory: "15Gi", Pods: "110"}, // pods from capacity
		Unschedulable: true,
	}
	if diff := cmp.Diff(want, NodeSpecFrom(n)); diff != "" {
		t.Errorf("NodeSpecFrom (-want +got):\n%s", diff)
	}
}

// TestSnapshotReplay takes a snapshot of a (fake) cluster, writes it,
// decodes it and replays it on another: the same pods are on the same
// nodes, with their labels, owner and requests.
func TestSnapshotReplay(t *testing.T) {
	ctx := context.Background()
	node := func(name string, unschedulable bool) *corev1.Node {
		return &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"zone": "z-" + name}},
			Spec:       corev1.NodeSpec{Unschedulable: unschedulable},
			Status:     corev1.NodeStatus{Allocatable: corev1.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("4Gi"), "pods": resource.MustParse("20")}},
		}
	}
	pod := func(ns, name, node string, phase corev1.PodPhase) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "i",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("100m"), "example.com/gpu": resource.MustParse("1")}}}}},
			Status: corev1.PodStatus{Phase: phase},
		}
	}
	agent := secretPod()
	running := pod("a", "running", "n1", corev1.PodRunning)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "a", UID: "rs-uid"}}
	running.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	source := fake.NewClientset(node("n1", false), node("n2", true),
		running, pod("a", "pending-bound", "n2", corev1.PodPending),
		pod("a", "done", "n1", corev1.PodSucceeded), pod("b", "failed", "n2", corev1.PodFailed),
		pod("b", "unbound", "", corev1.PodPending), pod("b", "orphan", "gone", corev1.PodRunning), agent)
	var progress bytes.Buffer
	s, err := Take(ctx, source, Options{Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "3 bound pods (1 skipped: their node was not listed)") {
		t.Errorf("progress %q", progress.String())
	}
	var file bytes.Buffer
	if err := scenario.Write(&file, s, []string{"a header"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(file.String(), "# a header\nnodes:\n") {
		t.Errorf("snapshot file:\n%s", file.String())
	}
	replayed, err := replay(file.Bytes(), nil)
	if err != nil {
		t.Fatalf("decoding the snapshot: %v\n%s", err, file.String())
	}
	target := fake.NewClientset()
	// The fake API server gives objects no UID.
	target.PrependReactor("create", "daemonsets", func(action clienttesting.Action) (bool, runtime.Object, error) {
		action.(clienttesting.CreateAction).GetObject().(*appsv1.DaemonSet).UID = "ds-uid"
		return false, nil, nil
	})
	if err := apply.CreateNodes(ctx, target, replayed.NodeObjects(time.Now()), nil); err != nil {
		t.Fatal(err)
	}
	if err := apply.CreateBoundPods(ctx, target, replayed.BoundDaemonSets, replayed.BoundPods, false, nil); err != nil {
		t.Fatal(err)
	}
	ds, err := target.AppsV1().DaemonSets("ops").Get(ctx, "agent", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the DaemonSet of the bound DaemonSet pods: %v", err)
	}
	// It wants exactly the bound pods: on their nodes, never replaced.
	terms := ds.Spec.Template.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if diff := cmp.Diff([]corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n1"}}}}}, terms); diff != "" {
		t.Errorf("DaemonSet node affinity (-want +got):\n%s", diff)
	}
	if ds.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType || ds.Spec.Template.Spec.SchedulerName != scenario.BoundPodsScheduler {
		t.Errorf("DaemonSet update strategy %v, scheduler %q", ds.Spec.UpdateStrategy.Type, ds.Spec.Template.Spec.SchedulerName)
	}
	if rss, _ := target.AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{}); len(rss.Items) != 0 {
		t.Errorf("ReplicaSets %v: only DaemonSets are created for bound pods", rss.Items)
	}

	n2, err := target.CoreV1().Nodes().Get(ctx, "n2", metav1.GetOptions{})
	if err != nil || !n2.Spec.Unschedulable || n2.Labels["zone"] != "z-n2" || n2.Status.Allocatable.Cpu().String() != "2" {
		t.Errorf("node n2 %+v, %v: want unschedulable, zone z-n2, 2 cpus", n2, err)
	}
	got := map[string]string{}
	list, err := target.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		got[p.Namespace+"/"+p.Name] = p.Spec.NodeName
		if p.Namespace == "ops" {
			if owner := metav1.GetControllerOf(&p); owner == nil || owner.Kind != "DaemonSet" || owner.APIVersion != "apps/v1" || owner.UID != ds.UID {
				t.Errorf("pod %s owner %+v, want the DaemonSet created, by its UID", p.Name, owner)
			}
			if !labels.SelectorFromSet(ds.Spec.Selector.MatchLabels).Matches(labels.Set(p.Labels)) {
				t.Errorf("pod %s labels %v: its DaemonSet does not select it", p.Name, p.Labels)
			}
			if len(p.Spec.InitContainers) != 2 || p.Spec.InitContainers[1].RestartPolicy == nil || len(p.Spec.Containers) != 2 ||
				p.Spec.Containers[0].Resources.Requests.Cpu().String() != "250m" || p.Spec.Containers[0].Image != scenario.PlaceholderImage {
				t.Errorf("pod %s spec %+v", p.Name, p.Spec)
			}
		}
		if p.Name == "running" && (len(p.OwnerReferences) != 0 || p.Annotations[scenario.OwnerAnnotation] != "ReplicaSet/web-abc") {
			t.Errorf("pod running: owners %v, annotations %v: want no owner (the garbage collector would delete it), recorded in %s", p.OwnerReferences, p.Annotations, scenario.OwnerAnnotation)
		}
		if p.Name == "running" {
			gpu := p.Spec.Containers[0].Resources
			if gpu.Requests["example.com/gpu"] != resource.MustParse("1") || gpu.Limits["example.com/gpu"] != resource.MustParse("1") {
				t.Errorf("extended resource requests %v, limits %v: want both 1", gpu.Requests, gpu.Limits)
			}
		}
	}
	want := map[string]string{"a/running": "n1", "a/pending-bound": "n2", "ops/agent-x7k2p": "n1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replayed pods and their nodes (-want +got):\n%s", diff)
	}
	for _, ns := range []string{"a", "ops"} {
		if _, err := target.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err != nil {
			t.Errorf("namespace %s: %v", ns, err)
		}
	}
}

// TestSnapshotAnnotationRoundTrip: a snapshot replays every annotation
// value as the cluster held it, also one that holds "${" or "$" (which a
// scenario reads as a placeholder or its escape).
func TestSnapshotAnnotationRoundTrip(t *testing.T) {
	now := time.Date(2031, time.March, 4, 9, 15, 30, 0, time.UTC)
	for _, value := range []string{
		"2030-01-01T00:00:00Z/2030-01-01T02:00:00Z",
		"${now}/${now+2h}",
		"${",
		"${not-a-placeholder",
		"a$${b}",
		"$$",
		"costs $5",
		"$",
		"}${}{$",
	} {
		t.Run(value, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Annotations: map[string]string{maintenanceKey: value}}}
			var file bytes.Buffer
			if err := scenario.Write(&file, &scenario.Scenario{Nodes: []scenario.NodeSpec{NodeSpecFrom(n)}}, nil); err != nil {
				t.Fatal(err)
			}
			s, err := replay(file.Bytes(), nil)
			if err != nil {
				t.Fatalf("replaying the snapshot: %v\n%s", err, file.String())
			}
			nodes := s.NodeObjects(now)
			if diff := cmp.Diff(value, nodes[0].Annotations[maintenanceKey]); diff != "" {
				t.Errorf("annotation after the round trip (-cluster +replayed):\n%s", diff)
			}
		})
	}
}

// TestSnapshotYAML11Words: a snapshot quotes the values that YAML 1.1 reads
// as booleans (a node named n, a label gpu=yes), so that its replay is not
// refused and keeps them as strings.
func TestSnapshotYAML11Words(t *testing.T) {
	labels := map[string]string{}
	for _, w := range []string{"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF"} {
		labels["example.com/"+strings.ToLower(w)+fmt.Sprint(len(labels))] = w
	}
	labels["on"] = "off"
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: labels}}
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "y", Name: "no", Labels: map[string]string{"gpu": "yes"}}, Spec: corev1.PodSpec{NodeName: "n"}}
	var file bytes.Buffer
	if err := scenario.Write(&file, &scenario.Scenario{Nodes: []scenario.NodeSpec{NodeSpecFrom(n)}, BoundPods: []scenario.BoundPod{BoundPodFrom(p)}}, nil); err != nil {
		t.Fatal(err)
	}
	s, err := replay(file.Bytes(), nil)
	if err != nil {
		t.Fatalf("replaying the snapshot: %v\n%s", err, file.String())
	}
	if diff := cmp.Diff(NodeSpecFrom(n), s.Scenario.Nodes[0]); diff != "" {
		t.Errorf("node after the round trip (-cluster +replayed):\n%s", diff)
	}
	if diff := cmp.Diff(BoundPodFrom(p), s.Scenario.BoundPods[0]); diff != "" {
		t.Errorf("bound pod after the round trip (-cluster +replayed):\n%s", diff)
	}
}

// replay decodes a snapshot file as the playground does, and plans it for
// profiles.
func replay(data []byte, profiles []string) (*scenario.Plan, error) {
	f, err := scenario.Decode("cluster.yaml", data)
	if err != nil {
		return nil, err
	}
	return f.Plan(profiles)
}
