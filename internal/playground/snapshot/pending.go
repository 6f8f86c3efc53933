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

package snapshot

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/adminsched/scheduler-plugins/internal/playground/scenario"
	"github.com/adminsched/scheduler-plugins/pkg/podowner"
)

// A pending pod is one no scheduler has placed yet: no spec.nodeName, not
// being deleted, neither Succeeded nor Failed. With Options.Pending a
// snapshot records each as a Pod object of the scenario, which the replay
// places, so that --explain says why it waits.

// LastFailedSchedulingAnnotation holds, on a recorded pending pod, the
// message of its last FailedScheduling event in the cluster: what the
// cluster's scheduler said, to read next to the replay's explanation.
const LastFailedSchedulingAnnotation = "playground.adminsched.io/last-failed-scheduling"

// maxMessageBytes caps a recorded event message: the scheduler's are one
// line per reason, well under it.
const maxMessageBytes = 2048

// Why a pending pod is not recorded, as the progress line says it.
var (
	skipGated     = "with scheduling gates, which no scheduler tries"
	skipDaemonSet = "of DaemonSets, whose owner the replay cannot recreate"
	skipScheduler = "for other schedulers"
	skipTooMany   = fmt.Sprintf("beyond the %d pods a scenario places", scenario.MaxPods)
)

var skipOrder = []string{skipGated, skipDaemonSet, skipScheduler, skipTooMany}

// isPending reports whether p waits for a node.
func isPending(p *corev1.Pod) bool {
	return p.Spec.NodeName == "" && p.DeletionTimestamp == nil &&
		p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// pendingSkip is why pending pod p is not recorded, "" if it is.
// schedulers, when not empty, are the scheduler names to record.
func pendingSkip(p *corev1.Pod, schedulers sets.Set[string]) string {
	switch {
	case len(p.Spec.SchedulingGates) > 0:
		return skipGated
	case podowner.IsDaemonSetPod(p):
		// Created without its owner, the plugins that exempt DaemonSet
		// pods would judge it as a plain pod: a wrong answer.
		return skipDaemonSet
	case schedulers.Len() > 0 && !schedulers.Has(p.Spec.SchedulerName):
		return skipScheduler
	}
	return ""
}

// PendingPodFrom is what a snapshot keeps of a pending pod: namespace,
// name, labels, what the scheduler filters and scores on (node selector,
// affinity, tolerations, topology spread constraints, each container's
// requests and host ports, pod-level requests), priority and preemption
// policy. Three annotations of the playground record its controller owner
// (scenario.OwnerAnnotation: the owner is not created), the scheduler it
// names (scenario.SnapshotSchedulerAnnotation: the replay gives the pod
// that profile if its config has one, else its first) and message, its
// last FailedScheduling event's ("" for none). Nothing else: no images,
// env, volumes, resource claims, service account or other annotations.
func PendingPodFrom(p *corev1.Pod, message string) *corev1.Pod {
	out := &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   p.Namespace,
			Name:        p.Name,
			Labels:      cloneOrNil(p.Labels),
			Annotations: map[string]string{scenario.SnapshotSchedulerAnnotation: p.Spec.SchedulerName},
		},
	}
	if o := metav1.GetControllerOfNoCopy(p); o != nil {
		out.Annotations[scenario.OwnerAnnotation] = o.Kind + "/" + o.Name
	}
	if message != "" {
		out.Annotations[LastFailedSchedulingAnnotation] = truncate(message, maxMessageBytes)
	}
	src := p.Spec.DeepCopy()
	out.Spec = corev1.PodSpec{
		NodeSelector:              src.NodeSelector,
		Affinity:                  src.Affinity,
		Tolerations:               src.Tolerations,
		TopologySpreadConstraints: src.TopologySpreadConstraints,
		Priority:                  src.Priority,
		PreemptionPolicy:          src.PreemptionPolicy,
	}
	if src.Resources != nil && len(src.Resources.Requests) > 0 {
		out.Spec.Resources = &corev1.ResourceRequirements{Requests: src.Resources.Requests}
	}
	for i, c := range src.InitContainers {
		ctr := pendingContainer("init-", i, c)
		ctr.RestartPolicy = c.RestartPolicy // a sidecar's requests count all along
		out.Spec.InitContainers = append(out.Spec.InitContainers, ctr)
	}
	for i, c := range src.Containers {
		out.Spec.Containers = append(out.Spec.Containers, pendingContainer("c-", i, c))
	}
	if len(out.Spec.Containers) == 0 {
		out.Spec.Containers = []corev1.Container{{Name: "c-0", Image: scenario.PlaceholderImage}}
	}
	return out
}

// pendingContainer keeps c's requests (as limits too where the API server
// requires them: extended resources, hugepages) and host ports, which the
// NodePorts filter reads, under a name of its own and the placeholder image.
func pendingContainer(prefix string, i int, c corev1.Container) corev1.Container {
	ctr := corev1.Container{Name: prefix + strconv.Itoa(i), Image: scenario.PlaceholderImage}
	if len(c.Resources.Requests) > 0 {
		ctr.Resources.Requests = maps.Clone(c.Resources.Requests)
		for name, q := range c.Resources.Requests {
			if !standardResources.Has(name) {
				if ctr.Resources.Limits == nil {
					ctr.Resources.Limits = corev1.ResourceList{}
				}
				ctr.Resources.Limits[name] = q
			}
		}
	}
	for _, port := range c.Ports {
		if port.HostPort != 0 {
			ctr.Ports = append(ctr.Ports, corev1.ContainerPort{ContainerPort: port.ContainerPort, HostPort: port.HostPort, Protocol: port.Protocol, HostIP: port.HostIP})
		}
	}
	return ctr
}

// standardResources may be requested without limits.
var standardResources = sets.New(corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage)

// pendingObject is pod as a scenario object: what a scenario file holds.
func pendingObject(pod *corev1.Pod) (scenario.Object, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		return nil, err
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]interface{}); ok {
		delete(meta, "creationTimestamp")
	}
	return scenario.Object(m), nil
}

// truncate cuts s to at most n bytes, on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// takePendingPods adds the pending pods of opts to s.Objects.
func takePendingPods(ctx context.Context, client kubernetes.Interface, opts Options, s *scenario.Scenario) error {
	logger := klog.FromContext(ctx)
	messages, err := lastFailedScheduling(ctx, client, opts.Namespace, opts.PageSize)
	if err != nil {
		// The pods are the answer; their events only say what the cluster
		// said, e.g. when events may not be listed.
		logger.Info("Recording the pending pods without their last FailedScheduling message", "err", err)
	}
	schedulers := sets.New(opts.SchedulerNames...)
	skipped := map[string]int{}
	var objErr error
	// Not bound; checked again below.
	err = eachPod(ctx, client, opts, "spec.nodeName=,status.phase!=Succeeded,status.phase!=Failed", func(p *corev1.Pod) {
		if !isPending(p) || objErr != nil {
			return
		}
		why := pendingSkip(p, schedulers)
		if why == "" && len(s.Objects) >= scenario.MaxPods {
			why = skipTooMany
		}
		if why != "" {
			skipped[why]++
			logger.V(2).Info("Skipping a pending pod", "pod", klog.KObj(p), "reason", why)
			return
		}
		obj, err := pendingObject(PendingPodFrom(p, messages[p.UID]))
		if err != nil {
			objErr = fmt.Errorf("pending pod %s: %w", klog.KObj(p), err)
			return
		}
		s.Objects = append(s.Objects, obj)
	})
	if err != nil {
		return err
	}
	if objErr != nil {
		return objErr
	}
	if len(s.Objects) == 1 {
		fmt.Fprint(opts.Progress, "1 pending pod")
	} else {
		fmt.Fprintf(opts.Progress, "%d pending pods", len(s.Objects))
	}
	var parts []string
	for _, why := range skipOrder {
		if n := skipped[why]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, why))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(opts.Progress, " (skipped: %s)", strings.Join(parts, "; "))
	}
	fmt.Fprintln(opts.Progress)
	return nil
}
