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
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

// WaitNodesManaged waits until KWOK manages every named node, which it
// shows by holding the node's lease in kube-node-lease, and returns the
// leases' renew times. Start returns before KWOK has taken any node over,
// and KWOK (v0.8.0) drops the events of a pod whose node it does not manage
// yet (PodController.need): a pod created on such a node can stay Pending.
// KWOK records a node as managed before it takes the lease
// (NodeController.watchResources, then TryHold), so once the lease is held
// it runs every pod created on the node. The signal serves nodes created
// Running (StartedNode), which KWOK's node-start stage never writes, as well
// as the others.
//
// The error names the first node not managed yet and what its lease lacks.
func WaitNodesManaged(ctx context.Context, client kubernetes.Interface, timeout time.Duration, names ...string) (map[string]time.Time, error) {
	renewed := make(map[string]time.Time, len(names))
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			if _, ok := renewed[name]; ok {
				continue
			}
			lease, err := client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				last = fmt.Sprintf("node %s has no lease", name)
				return false, nil
			}
			if err != nil {
				last = fmt.Sprintf("reading the lease of node %s: %v", name, err)
				return false, nil
			}
			// KWOK holds it under an identity of its own, not the node's name.
			if ptr.Deref(lease.Spec.HolderIdentity, "") == "" || lease.Spec.RenewTime == nil {
				last = fmt.Sprintf("the lease of node %s is held by %q, renewed %v", name, ptr.Deref(lease.Spec.HolderIdentity, ""), lease.Spec.RenewTime)
				return false, nil
			}
			renewed[name] = lease.Spec.RenewTime.Time
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("KWOK does not manage nodes %v after %v (no held lease in %s): %s: %w", names, timeout, corev1.NamespaceNodeLease, last, err)
	}
	return renewed, nil
}
