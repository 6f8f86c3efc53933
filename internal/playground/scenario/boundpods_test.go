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

package scenario

import (
	"fmt"
	"strings"
	"testing"
)

func TestBoundPodErrors(t *testing.T) {
	tests := []struct {
		name string
		data string
		want []string
	}{
		{name: "valid", data: node + "boundPods: [{name: p, nodeName: a, owner: {apiVersion: v1, kind: Node, name: a}, initContainers: [{sidecar: true, requests: {cpu: 1}}], containers: [{requests: {memory: 1Gi, example.com/gpu: 2}}]}]"},
		{name: "no node", data: node + "boundPods: [{name: p}]", want: []string{"boundPods[0].nodeName: Required value"}},
		{name: "unknown node", data: node + "boundPods: [{name: p, nodeName: b}]", want: []string{`boundPods[0].nodeName: Not found: "b"`}},
		{name: "bad names", data: node + "boundPods: [{namespace: A_B, name: P, nodeName: a}]", want: []string{"boundPods[0].namespace: Invalid value", "boundPods[0].name: Invalid value"}},
		{name: "no name", data: node + "boundPods: [{nodeName: a}]", want: []string{"boundPods[0].name: Required value"}},
		{name: "duplicate", data: node + "boundPods: [{name: p, nodeName: a}, {namespace: default, name: p, nodeName: a}]", want: []string{"boundPods[1].name: Duplicate value"}},
		{name: "bad label", data: node + "boundPods: [{name: p, nodeName: a, labels: {'a b': c}}]", want: []string{"boundPods[0].labels: Invalid value"}},
		{name: "incomplete owner", data: node + "boundPods: [{name: p, nodeName: a, owner: {kind: DaemonSet}}]", want: []string{"boundPods[0].owner.apiVersion: Required value", "boundPods[0].owner.name: Required value"}},
		{name: "bad request", data: node + "boundPods: [{name: p, nodeName: a, containers: [{requests: {cpu: lots}}, {requests: {memory: -1}}]}]", want: []string{`boundPods[0].containers[0].requests[cpu]: Invalid value: "lots"`, "boundPods[0].containers[1].requests[memory]", "must not be negative"}},
		{name: "sidecar container", data: node + "boundPods: [{name: p, nodeName: a, containers: [{sidecar: true}]}]", want: []string{"boundPods[0].containers[0].sidecar: Forbidden"}},
		{name: "unknown field", data: node + "boundPods: [{name: p, nodeName: a, image: x}]", want: []string{`unknown field "boundPods[0].image"`}},
		{name: "unschedulable node", data: "nodes: [{name: a, unschedulable: true}]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkDecodeError(t, tt.data, tt.want)
		})
	}
}

// TestBoundPodLimit: bound pods have their own limit, MaxBoundPods, well
// above MaxPods.
func TestBoundPodLimit(t *testing.T) {
	s := &Scenario{Nodes: []NodeSpec{{Name: "a"}}}
	s.BoundPods = make([]BoundPod, MaxPods+1)
	for i := range s.BoundPods {
		s.BoundPods[i] = BoundPod{Name: fmt.Sprintf("p-%d", i), NodeName: "a"}
	}
	if errs := Validate(s, nil); len(errs) > 0 {
		t.Errorf("%d bound pods: %v", len(s.BoundPods), errs)
	}
	s.BoundPods = make([]BoundPod, MaxBoundPods+1)
	errs := Validate(s, nil)
	if len(errs) != 1 || errs[0].Field != "boundPods" || !strings.Contains(errs[0].Error(), "must be at most 100000") {
		t.Errorf("%d bound pods: %v, want one error on boundPods", len(s.BoundPods), errs)
	}
}
