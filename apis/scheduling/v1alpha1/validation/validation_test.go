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

package validation

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/adminsched/scheduler-plugins/apis/scheduling/v1alpha1"
)

func validQuota() *v1alpha1.NodePoolQuota {
	return &v1alpha1.NodePoolQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "h100"},
		Spec: v1alpha1.NodePoolQuotaSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "h100"}},
			Teams: []v1alpha1.TeamQuota{{
				Name:       "team-a",
				Namespaces: []string{"a-train", "a-serve"},
				Limits: corev1.ResourceList{
					"nvidia.com/gpu":    resource.MustParse("64"),
					corev1.ResourceCPU:  resource.MustParse("512"),
					"hugepages-2Mi":     resource.MustParse("1Gi"),
					corev1.ResourcePods: resource.MustParse("0"),
				},
			}, {
				Name: "team-b",
				NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
					Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"b"},
				}}},
				Limits: corev1.ResourceList{
					corev1.ResourceMemory:           resource.MustParse("2Ti"),
					corev1.ResourceEphemeralStorage: resource.MustParse("10Ti"),
				},
			}},
		},
	}
}

func TestValidateNodePoolQuota(t *testing.T) {
	type want struct {
		typ   field.ErrorType
		field string
		// in is a piece of the message that tells what is allowed.
		in string
	}
	tests := []struct {
		name   string
		mutate func(*v1alpha1.NodePoolQuota)
		want   []want
	}{{
		name:   "valid",
		mutate: func(*v1alpha1.NodePoolQuota) {},
	}, {
		name: "empty node selector selects every node",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.NodeSelector = metav1.LabelSelector{}
		},
	}, {
		name: "unknown resource without a domain",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.Teams[0].Limits["gpu"] = resource.MustParse("1")
		},
		want: []want{{field.ErrorTypeNotSupported, "spec.teams[0].limits[gpu]", "<domain>/<name>"}},
	}, {
		name: "extended resource that is not a qualified name",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.Teams[1].Limits["nvidia.com/GPU_"] = resource.MustParse("1")
		},
		want: []want{{field.ErrorTypeInvalid, "spec.teams[1].limits[nvidia.com/GPU_]", "qualified name"}},
	}, {
		name: "extended resource with a bad domain",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.Teams[1].Limits["Nvidia_com/gpu"] = resource.MustParse("1")
		},
		want: []want{{field.ErrorTypeInvalid, "spec.teams[1].limits[Nvidia_com/gpu]", "qualified name"}},
	}, {
		name: "kubernetes.io domain",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.Teams[0].Limits["requests.kubernetes.io/cpu"] = resource.MustParse("1")
		},
		want: []want{{field.ErrorTypeInvalid, "spec.teams[0].limits[requests.kubernetes.io/cpu]", "native resources"}},
	}, {
		name: "hugepages without a size",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.Teams[0].Limits["hugepages-"] = resource.MustParse("1Gi")
			q.Spec.Teams[0].Limits["hugepages-big"] = resource.MustParse("1Gi")
			q.Spec.Teams[0].Limits["hugepages-0"] = resource.MustParse("1Gi")
		},
		want: []want{
			{field.ErrorTypeInvalid, "spec.teams[0].limits[hugepages-]", "2Mi"},
			{field.ErrorTypeInvalid, "spec.teams[0].limits[hugepages-0]", "2Mi"},
			{field.ErrorTypeInvalid, "spec.teams[0].limits[hugepages-big]", "2Mi"},
		},
	}, {
		name: "negative quantity",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.Teams[1].Limits[corev1.ResourceMemory] = resource.MustParse("-1Gi")
		},
		want: []want{{field.ErrorTypeInvalid, "spec.teams[1].limits[memory]", "zero or more"}},
	}, {
		name: "bad node selector",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.NodeSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{
				Key: "pool", Operator: metav1.LabelSelectorOpIn,
			}}
		},
		want: []want{{field.ErrorTypeRequired, "spec.nodeSelector.matchExpressions[0].values", "'In' or 'NotIn'"}},
	}, {
		name: "bad namespace selector",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.Teams[1].NamespaceSelector.MatchLabels = map[string]string{"team/x/y": "b"}
		},
		want: []want{{field.ErrorTypeInvalid, "spec.teams[1].namespaceSelector.matchLabels", "valid label key"}},
	}, {
		name: "namespace in two teams",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.Teams[1].Namespaces = []string{"b-train", "a-serve"}
		},
		want: []want{{field.ErrorTypeDuplicate, "spec.teams[1].namespaces[1]", `already in team "team-a" (spec.teams[0])`}},
	}, {
		name: "namespace twice in one team",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.Teams[0].Namespaces = append(q.Spec.Teams[0].Namespaces, "a-train")
		},
		want: []want{{field.ErrorTypeDuplicate, "spec.teams[0].namespaces[2]", `already in team "team-a"`}},
	}, {
		name: "namespace that is not a DNS-1123 label",
		mutate: func(q *v1alpha1.NodePoolQuota) {
			q.Spec.Teams[0].Namespaces = []string{"A_Train", "a.serve", strings.Repeat("a", 64)}
		},
		want: []want{
			{field.ErrorTypeInvalid, "spec.teams[0].namespaces[0]", "DNS-1123 label"},
			{field.ErrorTypeInvalid, "spec.teams[0].namespaces[1]", "DNS-1123 label"},
			{field.ErrorTypeInvalid, "spec.teams[0].namespaces[2]", "no more than 63"},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := validQuota()
			tc.mutate(q)
			errs := ValidateNodePoolQuota(q)
			if len(errs) != len(tc.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(tc.want), errs.ToAggregate())
			}
			for i, w := range tc.want {
				err := errs[i]
				if err.Type != w.typ || err.Field != w.field || !strings.Contains(err.Error(), w.in) {
					t.Errorf("error %d = %q (%s), want %s at %s mentioning %q", i, err.Error(), err.Type, w.typ, w.field, w.in)
				}
			}
		})
	}
}
