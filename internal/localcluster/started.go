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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kwokVersion is what KWOK's node-start stage writes into a node's
// kubeletVersion and containerRuntimeVersion ("kwok-" and its Version);
// TestStartedNode fails when the KWOK that hack/tools/kwok pins writes
// something else.
const kwokVersion = "kwok-0.8.0"

// kwokNodeConditions are the conditions KWOK's node-start stage gives a node
// (its NodeConditions: a kubelet's healthy node).
var kwokNodeConditions = []corev1.NodeCondition{
	{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status"},
	{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
	{Type: corev1.NodeDiskPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
	{Type: corev1.NodePIDPressure, Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
	{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "RouteCreated", Message: "RouteController created a route"},
}

// kwokDefaultResources are node-start's allocatable and capacity for a node
// created without them.
var kwokDefaultResources = corev1.ResourceList{
	corev1.ResourceCPU:    resource.MustParse("8"),
	corev1.ResourceMemory: resource.MustParse("32Gi"),
	corev1.ResourcePods:   resource.MustParse("110"),
}

// StartedNode returns a copy of node with the status KWOK's node-start stage
// (kwok.yaml) gives a node it takes over, at now: the kubelet's conditions,
// its name as Hostname address, node info, phase Running. The stage only
// takes nodes whose phase is not Running, so a node created so costs no
// status write: one request fewer per node for the API server and etcd,
// and one update fewer for KWOK and every node watcher, about a fifth of
// KWOK's CPU when 5,000 nodes are replayed (doc/performance.md). KWOK still
// manages the node (its lease, its pods, the heartbeat stage). Allocatable
// and capacity are kept when set, as the stage keeps them.
func StartedNode(node *corev1.Node, now time.Time) *corev1.Node {
	n := node.DeepCopy()
	t := metav1.NewTime(now.UTC().Truncate(time.Second))
	n.Status.Conditions = make([]corev1.NodeCondition, len(kwokNodeConditions))
	for i, c := range kwokNodeConditions {
		c.LastHeartbeatTime, c.LastTransitionTime = t, t
		n.Status.Conditions[i] = c
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: n.Name}}
	if len(n.Status.Allocatable) == 0 {
		n.Status.Allocatable = kwokDefaultResources.DeepCopy()
	}
	if len(n.Status.Capacity) == 0 {
		n.Status.Capacity = kwokDefaultResources.DeepCopy()
	}
	n.Status.NodeInfo = corev1.NodeSystemInfo{
		Architecture:            "amd64",
		OperatingSystem:         "linux",
		KubeletVersion:          kwokVersion,
		ContainerRuntimeVersion: kwokVersion,
	}
	n.Status.Phase = corev1.NodeRunning
	return n
}
