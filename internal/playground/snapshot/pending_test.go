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
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
)

// pendingSecretPod is secretPod waiting for a node, owned by a ReplicaSet,
// with everything the scheduler filters on.
func pendingSecretPod() *corev1.Pod {
	p := secretPod()
	p.UID = "pod-uid"
	p.Spec.NodeName = ""
	p.Spec.SchedulerName = "custom-scheduler"
	p.Status = corev1.PodStatus{Phase: corev1.PodPending}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "agent-abc", Namespace: "ops", UID: "rs-uid"}}
	p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}
	p.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/region": "us-east-1"}
	p.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}, TopologyKey: corev1.LabelHostname,
	}}}}
	p.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
		WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}}}
	p.Spec.PreemptionPolicy = ptr.To(corev1.PreemptNever)
	p.Spec.Containers[0].Ports = []corev1.ContainerPort{{Name: "PORT-NAME", ContainerPort: 8080}, {ContainerPort: 9100, HostPort: 9100, Protocol: corev1.ProtocolTCP}}
	p.Spec.Containers[1].Resources.Requests = corev1.ResourceList{"example.com/gpu": resource.MustParse("2")}
	return p
}

func TestPendingPodFromKeepsOnlyAllowedFields(t *testing.T) {
	src := pendingSecretPod()
	got := PendingPodFrom(src, "0/6 nodes are available: 6 node(s) didn't match Pod's node affinity/selector.")
	want := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ops", Name: "agent-x7k2p", Labels: map[string]string{"app": "agent"},
			Annotations: map[string]string{
				scenario.SnapshotSchedulerAnnotation: "custom-scheduler",
				scenario.OwnerAnnotation:             "ReplicaSet/agent-abc",
				LastFailedSchedulingAnnotation:       "0/6 nodes are available: 6 node(s) didn't match Pod's node affinity/selector.",
			}},
		Spec: corev1.PodSpec{
			NodeSelector:              src.Spec.NodeSelector,
			Affinity:                  src.Spec.Affinity,
			Tolerations:               src.Spec.Tolerations,
			TopologySpreadConstraints: src.Spec.TopologySpreadConstraints,
			Priority:                  ptr.To[int32](2000001000),
			PreemptionPolicy:          ptr.To(corev1.PreemptNever),
			InitContainers: []corev1.Container{
				{Name: "init-0", Image: scenario.PlaceholderImage},
				{Name: "init-1", Image: scenario.PlaceholderImage, RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("50m")}}},
			},
			Containers: []corev1.Container{
				{Name: "c-0", Image: scenario.PlaceholderImage,
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{"cpu": resource.MustParse("250m"), "memory": resource.MustParse("128Mi")}},
					Ports:     []corev1.ContainerPort{{ContainerPort: 9100, HostPort: 9100, Protocol: corev1.ProtocolTCP}}},
				{Name: "c-1", Image: scenario.PlaceholderImage, Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{"example.com/gpu": resource.MustParse("2")},
					Limits:   corev1.ResourceList{"example.com/gpu": resource.MustParse("2")}}},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PendingPodFrom (-want +got):\n%s", diff)
	}

	s := &scenario.Scenario{Nodes: []scenario.NodeSpec{{Name: "n1"}}}
	obj, err := pendingObject(got)
	if err != nil {
		t.Fatal(err)
	}
	s.Objects = append(s.Objects, obj)
	var out bytes.Buffer
	if err := Write(&out, s, nil); err != nil {
		t.Fatal(err)
	}
	// secretPod's markers stay in the cluster; a toleration is what the
	// scheduler reads, so this one's key is recorded.
	for _, leak := range []string{"SECRET", "ENV-", "IMAGE", "COMMAND", "NAME", "VOLUME", "MOUNT", "FINALIZER", "LASTAPPLIED",
		"vault", "999Mi", "10.1.2.3", "192.0.2.7", "rs-uid", "pod-uid", "example.com/", "env", "creationTimestamp", "status"} {
		if leak == "example.com/" {
			// Only the extended resource's name may name that domain.
			if strings.Count(out.String(), leak) != strings.Count(out.String(), "example.com/gpu") {
				t.Errorf("the snapshot contains %q beyond the extended resource:\n%s", leak, out.String())
			}
			continue
		}
		if strings.Contains(out.String(), leak) {
			t.Errorf("the snapshot contains %q:\n%s", leak, out.String())
		}
	}
	wantComment := "# ops/agent-x7k2p (scheduler custom-scheduler): 0/6 nodes are available: 6 node(s) didn't match Pod's node affinity/selector.\n- {"
	if !strings.Contains(out.String(), "\nobjects:\n"+wantComment) {
		t.Errorf("the snapshot lacks the pod's comment %q:\n%s", wantComment, out.String())
	}
}

// event is a FailedScheduling event of pod uid at seconds after a fixed
// time, as the scheduler's events.k8s.io recorder writes it (series for
// repeats) or as a core/v1 recorder does (lastTimestamp).
func event(name string, uid types.UID, seconds int, series bool, message string) *corev1.Event {
	at := time.Date(2030, 1, 1, 0, 0, seconds, 0, time.UTC)
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: "shop", CreationTimestamp: metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "shop", Name: "web", UID: uid},
		Reason:         "FailedScheduling", Message: message,
	}
	if series {
		e.EventTime = metav1.NewMicroTime(e.CreationTimestamp.Time)
		e.Series = &corev1.EventSeries{Count: 3, LastObservedTime: metav1.NewMicroTime(at)}
	} else {
		e.LastTimestamp = metav1.NewTime(at)
	}
	return e
}

func TestTakePending(t *testing.T) {
	ctx := context.Background()
	pod := func(name, scheduler string, mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(name + "-uid")},
			Spec:       corev1.PodSpec{SchedulerName: scheduler, Containers: []corev1.Container{{Name: "c", Image: "i"}}},
			Status:     corev1.PodStatus{Phase: corev1.PodPending},
		}
		if mutate != nil {
			mutate(p)
		}
		return p
	}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "shop", UID: "ds-uid"}}
	objects := []runtime.Object{
		&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}},
		pod("web", "custom-scheduler", nil),
		pod("batch", "default-scheduler", nil),
		pod("gated", "custom-scheduler", func(p *corev1.Pod) { p.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "example.com/quota"}} }),
		pod("agent-x", "custom-scheduler", func(p *corev1.Pod) {
			p.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))}
		}),
		pod("leaving", "custom-scheduler", func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.Now()); p.Finalizers = []string{"x"} }),
		pod("failed", "custom-scheduler", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }),
		pod("bound", "custom-scheduler", func(p *corev1.Pod) { p.Spec.NodeName = "n1" }),
		// web's events: the latest, a repeat in a series, wins.
		event("web.1", "web-uid", 10, false, "0/1 nodes are available: 1 Insufficient cpu."),
		event("web.2", "web-uid", 30, true, "0/1 nodes are available:\n  1 node(s) didn't match Pod's node affinity/selector."),
		event("web.3", "web-uid", 20, false, "an older one"),
		// An event of a former pod of the same name.
		event("web.4", "old-web-uid", 40, false, "a former pod's"),
	}
	tests := []struct {
		name       string
		schedulers []string
		eventsFail bool
		want       map[string]string // pod -> its comment's message
		progress   string
	}{
		{name: "every scheduler", want: map[string]string{
			"web":   "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
			"batch": "no FailedScheduling event",
		}, progress: "2 pending pods (skipped: 1 with scheduling gates, which no scheduler tries; 1 of DaemonSets, whose owner the replay cannot recreate)\n"},
		{name: "one scheduler", schedulers: []string{"custom-scheduler"}, want: map[string]string{
			"web": "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
		}, progress: "1 pending pod (skipped: 1 with scheduling gates, which no scheduler tries; 1 of DaemonSets, whose owner the replay cannot recreate; 1 for other schedulers)\n"},
		{name: "events forbidden", eventsFail: true, want: map[string]string{
			"web": "no FailedScheduling event", "batch": "no FailedScheduling event",
		}, progress: "2 pending pods (skipped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := fake.NewClientset(objects...)
			if tt.eventsFail {
				client.PrependReactor("list", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
					return true, nil, errors.New("events is forbidden")
				})
			}
			var progress bytes.Buffer
			s, err := Take(ctx, client, Options{Progress: &progress, Pending: true, SchedulerNames: tt.schedulers})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(progress.String(), "1 bound pods\n"+tt.progress) {
				t.Errorf("progress %q, want %q", progress.String(), tt.progress)
			}
			var file bytes.Buffer
			if err := Write(&file, s, nil); err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, line := range strings.Split(file.String(), "\n") {
				if rest, ok := strings.CutPrefix(line, "# shop/"); ok {
					name, comment, _ := strings.Cut(rest, " ")
					_, got[name], _ = strings.Cut(comment, "): ")
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pending pods recorded, with their last message (-want +got):\n%s\n%s", diff, file.String())
			}
		})
	}
}

// TestPendingReplayProfile: the replay gives a recorded pending pod the
// profile of the scheduler it named when its config has one, else its
// first profile; the pod is created unbound, with its scheduling fields.
func TestPendingReplayProfile(t *testing.T) {
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, pendingSecretPod())
	s, err := Take(context.Background(), client, Options{Pending: true})
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if err := Write(&file, s, []string{"header"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		profiles []string
		want     string
	}{
		{[]string{"default-scheduler", "custom-scheduler"}, "custom-scheduler"},
		{[]string{"spread", "pack"}, "spread"},
	} {
		plan, err := replay(file.Bytes(), tt.profiles)
		if err != nil {
			t.Fatalf("replaying the snapshot: %v\n%s", err, file.String())
		}
		if len(plan.Objects) != 1 {
			t.Fatalf("objects %v, want the pending pod", plan.Objects)
		}
		var pod corev1.Pod
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(plan.Objects[0].Object, &pod); err != nil {
			t.Fatal(err)
		}
		if pod.Spec.SchedulerName != tt.want || pod.Spec.NodeName != "" || pod.Spec.NodeSelector["topology.kubernetes.io/region"] != "us-east-1" ||
			len(pod.Spec.TopologySpreadConstraints) != 1 || pod.Spec.Affinity.PodAntiAffinity == nil {
			t.Errorf("profiles %v: replayed pod's scheduler %q, node %q, node selector %v, spread %v, affinity %v: want scheduler %s and the scheduling fields",
				tt.profiles, pod.Spec.SchedulerName, pod.Spec.NodeName, pod.Spec.NodeSelector, pod.Spec.TopologySpreadConstraints, pod.Spec.Affinity, tt.want)
		}
	}
}
