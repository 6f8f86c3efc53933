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

package apply

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func orderTestObject(apiVersion, kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	return u
}

func TestOrder(t *testing.T) {
	var (
		ns1    = orderTestObject("v1", "Namespace", "a")
		ns2    = orderTestObject("v1", "Namespace", "b")
		crd1   = orderTestObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com")
		crd2   = orderTestObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "gadgets.example.com")
		deploy = orderTestObject("apps/v1", "Deployment", "web")
		widget = orderTestObject("example.com/v1", "Widget", "w")
		svc    = orderTestObject("v1", "Service", "web")
		pc     = orderTestObject("scheduling.k8s.io/v1", "PriorityClass", "high")
		class  = orderTestObject("resource.k8s.io/v1", "DeviceClass", "matlab")
		slice  = orderTestObject("resource.k8s.io/v1", "ResourceSlice", "matlab")
		rule   = orderTestObject("resource.k8s.io/v1", "DeviceTaintRule", "drain")
		job    = orderTestObject("batch/v1", "Job", "solve")
		// Same kind name, other group: no rule.
		otherNS = orderTestObject("example.com/v1", "Namespace", "x")
	)
	tests := []struct {
		name string
		in   []*unstructured.Unstructured
		want []*unstructured.Unstructured
	}{
		{name: "empty", in: nil, want: nil},
		{name: "no rules keeps file order", in: []*unstructured.Unstructured{svc, deploy, pc}, want: []*unstructured.Unstructured{svc, deploy, pc}},
		{
			name: "namespaces then CRDs then the rest, each stable",
			in:   []*unstructured.Unstructured{deploy, widget, crd1, ns1, svc, crd2, ns2, pc},
			want: []*unstructured.Unstructured{ns1, ns2, crd1, crd2, deploy, widget, svc, pc},
		},
		{
			name: "DRA devices before the pods that ask for them, after namespaces",
			in:   []*unstructured.Unstructured{job, slice, ns1, rule, class},
			want: []*unstructured.Unstructured{ns1, slice, rule, class, job},
		},
		{name: "kind of another group has no rule", in: []*unstructured.Unstructured{otherNS, crd1, ns1}, want: []*unstructured.Unstructured{ns1, crd1, otherNS}},
		{name: "nil ranks with the rest", in: []*unstructured.Unstructured{nil, ns1}, want: []*unstructured.Unstructured{ns1, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]*unstructured.Unstructured(nil), tt.in...)
			got := Order(tt.in)
			if diff := cmp.Diff(orderTestNames(tt.want), orderTestNames(got)); diff != "" {
				t.Errorf("Order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(orderTestNames(in), orderTestNames(tt.in)); diff != "" {
				t.Errorf("Order changed its input (-before +after):\n%s", diff)
			}
		})
	}
}

// orderTestNames are objs as "apiVersion kind name", "nil" for nil.
func orderTestNames(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if o == nil {
			out = append(out, "nil")
			continue
		}
		out = append(out, o.GetAPIVersion()+" "+o.GetKind()+" "+o.GetName())
	}
	return out
}
