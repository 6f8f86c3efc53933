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

package share

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/apis/core"
	k8sv1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/apis/core/validation"
)

var (
	zoneA    = v1.NodeSelectorRequirement{Key: "topology.kubernetes.io/zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}
	zoneB    = v1.NodeSelectorRequirement{Key: "topology.kubernetes.io/zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}
	byName   = v1.NodeSelectorRequirement{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}}
	spotReq  = v1.NodeSelectorRequirement{Key: "karpenter.sh/capacity-type", Operator: v1.NodeSelectorOpIn, Values: []string{"spot"}}
	noGKESpt = v1.NodeSelectorRequirement{Key: "cloud.google.com/gke-spot", Operator: v1.NodeSelectorOpDoesNotExist}
	prefer   = []v1.PreferredSchedulingTerm{{Weight: 10, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{zoneA}}}}
	podAnti  = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}}}
)

func required(terms ...v1.NodeSelectorTerm) *v1.NodeSelector {
	return &v1.NodeSelector{NodeSelectorTerms: terms}
}

func exprs(reqs ...v1.NodeSelectorRequirement) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: reqs}
}

func requireClassCases() []struct {
	name string
	aff  *v1.Affinity
	reqs []v1.NodeSelectorRequirement
	want *v1.Affinity
} {
	return []struct {
		name string
		aff  *v1.Affinity
		reqs []v1.NodeSelectorRequirement
		want *v1.Affinity
	}{
		{
			name: "nil affinity: one term",
			reqs: []v1.NodeSelectorRequirement{spotReq},
			want: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(exprs(spotReq))}},
		},
		{
			name: "only preferred terms and pod anti-affinity: kept, one required term",
			aff:  &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: prefer}, PodAntiAffinity: podAnti},
			reqs: []v1.NodeSelectorRequirement{noGKESpt},
			want: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution:  required(exprs(noGKESpt)),
				PreferredDuringSchedulingIgnoredDuringExecution: prefer,
			}, PodAntiAffinity: podAnti},
		},
		{
			name: "two required terms: appended to each",
			aff:  &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(exprs(zoneA), exprs(zoneB))}},
			reqs: []v1.NodeSelectorRequirement{spotReq},
			want: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(exprs(zoneA, spotReq), exprs(zoneB, spotReq))}},
		},
		{
			name: "a term with matchFields only gains matchExpressions",
			aff:  &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{byName}})}},
			reqs: []v1.NodeSelectorRequirement{spotReq},
			want: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{spotReq}, MatchFields: []v1.NodeSelectorRequirement{byName}})}},
		},
		{
			name: "an empty term stays empty",
			aff:  &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(v1.NodeSelectorTerm{}, exprs(zoneA))}},
			reqs: []v1.NodeSelectorRequirement{spotReq},
			want: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(v1.NodeSelectorTerm{}, exprs(zoneA, spotReq))}},
		},
		{
			name: "two requirements keep their order",
			aff:  &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(exprs(zoneA))}},
			reqs: []v1.NodeSelectorRequirement{spotReq, noGKESpt},
			want: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(exprs(zoneA, spotReq, noGKESpt))}},
		},
		{
			name: "no requirements: an unchanged copy",
			aff:  &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: prefer}},
			want: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: prefer}},
		},
	}
}

func TestRequireClass(t *testing.T) {
	for _, tc := range requireClassCases() {
		t.Run(tc.name, func(t *testing.T) {
			before, reqsBefore := tc.aff.DeepCopy(), append([]v1.NodeSelectorRequirement(nil), tc.reqs...)
			got := RequireClass(tc.aff, tc.reqs)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("RequireClass (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.aff); diff != "" {
				t.Errorf("input affinity changed (-before +after):\n%s", diff)
			}
			// The result must share no memory with the inputs.
			if len(tc.reqs) > 0 {
				got.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[len(got.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms)-1].MatchExpressions[0].Values = []string{"changed"}
				got.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchFields = nil
			}
			if diff := cmp.Diff(before, tc.aff); diff != "" {
				t.Errorf("input affinity aliased by the result (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(reqsBefore, tc.reqs); diff != "" {
				t.Errorf("requirements changed (-before +after):\n%s", diff)
			}
		})
	}
}

// gatedPod is a valid pod as the API server stores it, gated by our gate.
func gatedPod(aff *v1.Affinity) *v1.Pod {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", ResourceVersion: "1"},
		Spec: v1.PodSpec{
			Containers:      []v1.Container{{Name: "c", Image: "img"}},
			SchedulingGates: []v1.PodSchedulingGate{{Name: "ondemandshare.adminsched.io/decide"}},
			Affinity:        aff,
		},
	}
	k8sv1.SetObjectDefaults_Pod(pod)
	return pod
}

// validateUpdate runs the API server's own pod update validation.
func validateUpdate(t *testing.T, oldPod, newPod *v1.Pod) error {
	t.Helper()
	var o, n core.Pod
	if err := k8sv1.Convert_v1_Pod_To_core_Pod(oldPod, &o, nil); err != nil {
		t.Fatal(err)
	}
	if err := k8sv1.Convert_v1_Pod_To_core_Pod(newPod, &n, nil); err != nil {
		t.Fatal(err)
	}
	if errs := validation.ValidatePodCreate(&o, validation.PodValidationOptions{}); len(errs) > 0 {
		t.Fatalf("the old pod is not valid: %v", errs)
	}
	return validation.ValidatePodUpdate(&n, &o, validation.PodValidationOptions{}).ToAggregate()
}

// TestRequireClassPassesPodUpdateValidation makes the update the decider
// will make (affinity, AKS toleration, slot cost, gate removed) and checks
// the API server accepts it for every case above.
func TestRequireClassPassesPodUpdateValidation(t *testing.T) {
	_, tols, err := AKS.Requirements(Spot)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range requireClassCases() {
		t.Run(tc.name, func(t *testing.T) {
			oldPod := gatedPod(tc.aff)
			newPod := oldPod.DeepCopy()
			newPod.Spec.Affinity = RequireClass(oldPod.Spec.Affinity, tc.reqs)
			newPod.Spec.Tolerations = append(newPod.Spec.Tolerations, tols...)
			newPod.Annotations = map[string]string{DeletionCostAnnotation: DeletionCost(7)}
			newPod.Spec.SchedulingGates = nil
			if err := validateUpdate(t, oldPod, newPod); err != nil {
				t.Errorf("the API server would reject the update: %v", err)
			}
		})
	}
}

// TestAddingATermFailsPodUpdateValidation shows that the check above can
// fail: ORing the class in as a new term, instead of ANDing it into each,
// is rejected.
func TestAddingATermFailsPodUpdateValidation(t *testing.T) {
	oldPod := gatedPod(&v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(exprs(zoneA))}})
	newPod := oldPod.DeepCopy()
	terms := &newPod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	*terms = append(*terms, exprs(spotReq))
	if err := validateUpdate(t, oldPod, newPod); err == nil {
		t.Error("adding a required term passed validation")
	}
}

// TestAppendingToAnEmptyTermFailsPodUpdateValidation is why RequireClass
// leaves an empty term empty.
func TestAppendingToAnEmptyTermFailsPodUpdateValidation(t *testing.T) {
	oldPod := gatedPod(&v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required(v1.NodeSelectorTerm{}, exprs(zoneA))}})
	newPod := oldPod.DeepCopy()
	newPod.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0] = exprs(spotReq)
	if err := validateUpdate(t, oldPod, newPod); err == nil {
		t.Error("filling an empty required term passed validation")
	}
}
