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

package quota

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

func h100() *v1alpha1.NodePoolQuota {
	return &v1alpha1.NodePoolQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "h100"},
		Spec: v1alpha1.NodePoolQuotaSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "h100"}},
			Teams: []v1alpha1.TeamQuota{
				{Name: "team-a", Namespaces: []string{"a-1"}, NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}},
					Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("64"), corev1.ResourceCPU: resource.MustParse("200"), corev1.ResourcePods: resource.MustParse("10")}},
				{Name: "team-b", Namespaces: []string{"b-1"}, Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}},
			},
		},
	}
}

func TestCompile(t *testing.T) {
	q, err := Compile(h100())
	if err != nil {
		t.Fatal(err)
	}
	if !q.InPool(map[string]string{"pool": "h100", "zone": "a"}) || q.InPool(map[string]string{"pool": "general"}) {
		t.Errorf("InPool does not follow spec.nodeSelector")
	}
	a := q.Teams[0]
	var got []string
	for _, l := range a.Limits {
		got = append(got, string(l.Resource)+"="+Format(l.Resource, l.Max))
	}
	if want := "cpu=200 nvidia.com/gpu=64 pods=10"; strings.Join(got, " ") != want {
		t.Errorf("team-a's limits %q, want %q (sorted, cpu in cores)", got, want)
	}
	if q.Teams[1].Limits[0].Max != 1500 {
		t.Errorf("team-b's cpu limit is %d millicores, want 1500", q.Teams[1].Limits[0].Max)
	}

	bad := h100()
	bad.Spec.Teams[1].NamespaceSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: "Near"}}}
	if _, err := Compile(bad); err == nil || !strings.Contains(err.Error(), "spec.teams[1].namespaceSelector") {
		t.Errorf("an invalid selector: err %v, want one naming spec.teams[1].namespaceSelector", err)
	}
}

func TestTeamOf(t *testing.T) {
	q, err := Compile(h100())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ns     string
		labels labels.Set
		want   int
	}{
		{"a-1", nil, 0},                      // named, namespace not known
		{"a-2", labels.Set{"team": "a"}, 0},  // selected by label
		{"a-2", nil, -1},                     // the label is not known
		{"b-1", labels.Set{"team": "x"}, 1},  // named
		{"c-1", labels.Set{"team": "c"}, -1}, // no team
		{"b-1", labels.Set{"team": "a"}, 0},  // both: the first team wins
	} {
		if got := q.TeamOf(tc.ns, tc.labels); got != tc.want {
			t.Errorf("TeamOf(%s, %v) = %d, want %d", tc.ns, tc.labels, got, tc.want)
		}
	}
}

func TestRequestsAndExceeded(t *testing.T) {
	q, err := Compile(h100())
	if err != nil {
		t.Fatal(err)
	}
	a := &q.Teams[0] // limits: cpu 200, nvidia.com/gpu 64, pods 10
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}}}},
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
			// The API server defaults an extended resource's request to its limit.
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2500m"), "nvidia.com/gpu": resource.MustParse("8")},
			Limits:   corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")},
		}}},
	}}
	req := Requests(pod, a)
	// An init container's larger request wins.
	if want := []int64{4000, 8, 1}; !equal(req, want) {
		t.Fatalf("Requests = %v, want %v", req, want)
	}
	if !Counts(req) || Counts([]int64{0, 0}) {
		t.Errorf("Counts")
	}
	if i := Exceeded(a, []int64{100000, 56, 3}, req); i != -1 {
		t.Errorf("56+8 of 64 GPUs: exceeded %d, want none", i)
	}
	used := []int64{100000, 57, 3}
	i := Exceeded(a, used, req)
	if i != 1 {
		t.Fatalf("57+8 of 64 GPUs: exceeded %d, want 1 (nvidia.com/gpu)", i)
	}
	if got, want := Message("h100", a, i, used, req), "team team-a uses 57 of 64 nvidia.com/gpu in pool h100 and the pod asks for 8"; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	// A resource the pod does not ask for never blocks it, even over its limit.
	if i := Exceeded(a, []int64{100000, 64, 10}, []int64{0, 0, 0}); i != -1 {
		t.Errorf("a pod asking nothing: exceeded %d", i)
	}
	if got := Format(corev1.ResourceCPU, 1500); got != "1500m" {
		t.Errorf("Format(cpu, 1500) = %q", got)
	}
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
