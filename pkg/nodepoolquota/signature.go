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

package nodepoolquota

import (
	"context"

	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
	fwk "k8s.io/kube-scheduler/framework"
)

var _ fwk.SignPlugin = &NodePoolQuota{}

// signatureKey names the plugin's signature fragment, a podSignature.
const signatureKey = "NodePoolQuota.podSignature()"

// podSignature is what the plugin's answer for a pod is a function of, read
// from the pod alone: its namespace (which decides its teams, with the
// namespace's labels, which are the same for pods of one namespace at any
// moment) and its requests (which decide whether it counts and how much).
// The quotas themselves change without an update of the pod, so the
// signature must not read them: it does not depend on which quotas exist.
type podSignature struct {
	Namespace string          `json:"namespace"`
	Requests  v1.ResourceList `json:"requests,omitempty"`
}

// SignPod signs a pod with its podSignature, so that the profile keeps
// opportunistic batching. A batch's hinted node is filtered again in the
// next cycle, against usage counted afresh, so a hint never admits a pod
// past its quota.
func (pl *NodePoolQuota) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{{Key: signatureKey, Value: podSignature{Namespace: pod.Namespace, Requests: podRequests(pod)}}}, nil
}

// podRequests are the pod's requests as quota.Requests reads them.
func podRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}
