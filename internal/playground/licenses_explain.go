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

package playground

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/adminsched/scheduler-plugins/internal/licensedriver"
	"github.com/adminsched/scheduler-plugins/internal/licensedriver/config"
	"github.com/adminsched/scheduler-plugins/internal/playground/report"
	"github.com/adminsched/scheduler-plugins/internal/playground/workload"
)

// explainSeats adds to the explanation of each pod of results left unbound
// the seats of every feature of conf that the pod asks for with
// resources.limits: issued and checked out elsewhere as server has them
// now, held by pods as the cluster's ResourceClaims have them. Those are
// the figures the driver plans the pools from, whatever devices it
// publishes them as.
func explainSeats(ctx context.Context, client kubernetes.Interface, conf *config.Configuration, server *licenseServer, owned []workload.OwnedPod, results []report.PodResult) error {
	pods := make(map[types.NamespacedName]*corev1.Pod, len(owned))
	for _, op := range owned {
		pods[types.NamespacedName{Namespace: op.Pod.Namespace, Name: op.Pod.Name}] = op.Pod
	}
	var held map[string]int
	for i := range results {
		pr := &results[i]
		pod := pods[types.NamespacedName{Namespace: pr.Namespace, Name: pr.Name}]
		if pr.Node != "" || pr.Explain == nil || pod == nil {
			continue
		}
		for _, f := range conf.Features {
			n := requestedSeats(pod, corev1.ResourceName(f.ResourceName))
			if n == 0 {
				continue
			}
			if held == nil {
				var err error
				if held, err = heldSeats(ctx, client); err != nil {
					return err
				}
			}
			state, _ := server.feature(f.Name)
			pr.Explain.Seats = append(pr.Explain.Seats, report.LicenseSeats{
				Feature: f.Name, Requested: n, Issued: state.Total, HeldByPods: held[f.Pool], CheckedOutElsewhere: state.InUse,
			})
		}
	}
	return nil
}

// requestedSeats is how much of the extended resource name pod asks for: its
// containers' and sidecars' limits together, or an init container's if that
// is more (init containers run one at a time, before the others).
func requestedSeats(pod *corev1.Pod, name corev1.ResourceName) int64 {
	limit := func(c corev1.Container) int64 {
		if q, ok := c.Resources.Limits[name]; ok {
			return q.Value()
		}
		q := c.Resources.Requests[name]
		return q.Value()
	}
	var sum, init int64
	for _, c := range pod.Spec.Containers {
		sum += limit(c)
	}
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sum += limit(c)
		} else {
			init = max(init, limit(c))
		}
	}
	return max(sum, init)
}

// heldSeats counts, per pool, the seats that the cluster's ResourceClaims
// hold of the license driver's devices: one per device allocated, or what
// a claim consumes of a shared device's capacity (its one capacity is
// seats).
func heldSeats(ctx context.Context, client kubernetes.Interface) (map[string]int, error) {
	claims, err := client.ResourceV1().ResourceClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the ResourceClaims: %w", err)
	}
	held := map[string]int{}
	for _, c := range claims.Items {
		if c.Status.Allocation == nil {
			continue
		}
		for _, r := range c.Status.Allocation.Devices.Results {
			if r.Driver == licensedriver.DriverName {
				held[r.Pool] += resultSeats(r)
			}
		}
	}
	return held, nil
}

func resultSeats(r resourceapi.DeviceRequestAllocationResult) int {
	n := int64(1)
	for _, q := range r.ConsumedCapacity {
		n = max(n, q.Value())
	}
	return int(min(n, 1<<31-1))
}
