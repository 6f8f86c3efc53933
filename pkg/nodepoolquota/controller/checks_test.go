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

package controller

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNotOffered: a limit on a resource that no node of the pool offers
// (nvidia.com/gpus, a typo) is reported, naming it; a pool whose nodes
// offer it, and an empty pool, are not.
func TestNotOffered(t *testing.T) {
	withGPUs := node("gpu-1", map[string]string{"pool": "gpu"})
	withGPUs.Status.Allocatable = v1.ResourceList{gpu: resource.MustParse("8")}
	// A node outside the pool offering the mistyped name does not count.
	outside := node("general", map[string]string{"pool": "general"})
	outside.Status.Allocatable = v1.ResourceList{"nvidia.com/gpus": resource.MustParse("8")}
	typo := npq("typo", inPool, "team-a", []string{"a"}, v1.ResourceList{"nvidia.com/gpus": resource.MustParse("4"), v1.ResourceCPU: resource.MustParse("8")})
	empty := npq("empty", map[string]string{"pool": "none"}, "team-b", []string{"b"}, v1.ResourceList{"nvidia.com/gpus": resource.MustParse("4")})
	h := newHarness(t, withGPUs, outside, namespace("a", nil), namespace("b", nil), namespace("c", nil), typo, empty,
		npq("right", inPool, "team-c", []string{"c"}, gpus(4)))
	h.sync()
	c := meta.FindStatusCondition(h.quota("typo").Status.Conditions, ConditionResourcesOffered)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != ReasonNotOffered || !strings.Contains(c.Message, "no node of the pool has allocatable nvidia.com/gpus") {
		t.Errorf("typo: ResourcesOffered %+v, want False naming nvidia.com/gpus", c)
	}
	for _, name := range []string{"right", "empty"} {
		if c := meta.FindStatusCondition(h.quota(name).Status.Conditions, ConditionResourcesOffered); c == nil || c.Status != metav1.ConditionTrue {
			t.Errorf("%s: ResourcesOffered %+v, want True", name, c)
		}
	}
}

// TestOverlapping: a team limited by two quotas on nodes both select is
// reported on both, naming the other quota, the namespace and the nodes;
// quotas on disjoint pools, or over other namespaces, are not.
func TestOverlapping(t *testing.T) {
	h := newHarness(t,
		node("gpu-1", map[string]string{"pool": "gpu", "type": "h100"}), node("gpu-2", map[string]string{"pool": "gpu", "type": "a100"}),
		node("general", map[string]string{"pool": "general"}),
		namespace("a", nil), namespace("b", map[string]string{"team": "b"}),
		npq("gpu", inPool, "team-a", []string{"a"}, gpus(10)),
		npq("h100", map[string]string{"type": "h100"}, "a-on-h100", []string{"a"}, gpus(2)),
		npq("general", map[string]string{"pool": "general"}, "team-a", []string{"a"}, gpus(2)),
		npq("h100-b", map[string]string{"type": "h100"}, "team-b", []string{"b"}, gpus(2)))
	h.sync()
	want := map[string]string{
		"gpu":  "team team-a shares namespaces a with team a-on-h100 of NodePoolQuota h100 on 1 nodes both select: both limits apply there",
		"h100": "team a-on-h100 shares namespaces a with team team-a of NodePoolQuota gpu on 1 nodes both select: both limits apply there",
	}
	for _, name := range []string{"gpu", "h100", "general", "h100-b"} {
		c := meta.FindStatusCondition(h.quota(name).Status.Conditions, ConditionOverlapping)
		if c == nil {
			t.Errorf("%s: no Overlapping condition", name)
			continue
		}
		if w, ok := want[name]; ok {
			if c.Status != metav1.ConditionTrue || c.Message != w {
				t.Errorf("%s: Overlapping %s %q, want True %q", name, c.Status, c.Message, w)
			}
		} else if c.Status != metav1.ConditionFalse {
			t.Errorf("%s: Overlapping %s %q, want False", name, c.Status, c.Message)
		}
	}
}
